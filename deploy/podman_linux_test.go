package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// podman runs podman against a store of the test's own (vfs: plain
// directories, nothing mounted) so that neither the machine's images nor
// another test's are touched, on this machine's terms:
//   - runc, not crun: crun 1.8 refuses a hybrid cgroup layout (here v1
//     with hugetlb on the v2 hierarchy): "cgroups in hybrid mode not
//     supported, drop all controllers from cgroupv2";
//   - cgroupfs: there is no systemd;
//   - no events (no journald) and a private tmpdir, so nothing is
//     written under /run; and each podman runs in a mount namespace of
//     its own with a tmpfs on /var/lib, where it would otherwise keep its
//     blob cache (/var/lib/containers/cache, whatever --root says).
type podman struct {
	t    *testing.T
	args []string
}

func newPodman(t *testing.T) *podman {
	t.Helper()
	blocktest.NeedRoot(t)
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("needs podman (Debian's podman, with runc)")
	}
	runtime := "runc"
	if _, err := exec.LookPath("runc"); err != nil {
		runtime = "crun"
	}
	dir := t.TempDir()
	p := &podman{t: t, args: []string{
		"--root", filepath.Join(dir, "storage"), "--runroot", filepath.Join(dir, "run"),
		"--tmpdir", filepath.Join(dir, "tmp"), "--storage-driver", "vfs",
		"--cgroup-manager", "cgroupfs", "--runtime", runtime, "--events-backend", "none",
	}}
	t.Cleanup(func() { p.run("rmi", "--all", "--force") })
	return p
}

// run runs a podman command and returns its output.
func (p *podman) run(args ...string) (string, error) {
	argv := append([]string{"--mount", "--propagation", "private", "--", "/bin/sh", "-ec",
		`mount -t tmpfs -o mode=0755 ringcp-var-lib /var/lib; exec podman "$@"`, "podman"}, p.args...)
	cmd := exec.Command("unshare", append(argv, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (p *podman) must(args ...string) string {
	p.t.Helper()
	out, err := p.run(args...)
	if err != nil {
		p.t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// limits are the ulimits a container gets: at most this process's hard
// limits, and few processes. Podman asks for more by default (nofile
// 1048576, nproc 4194304), which needs CAP_SYS_RESOURCE, which root here
// does not have; runc could not set nproc even to our own hard limit
// ("error setting rlimit type 6: operation not permitted").
func limits(t *testing.T) []string {
	var args []string
	for _, l := range []struct {
		name     string
		resource int
		most     uint64
	}{{"nofile", unix.RLIMIT_NOFILE, 1 << 20}, {"nproc", unix.RLIMIT_NPROC, 4096}} {
		var r unix.Rlimit
		if err := unix.Getrlimit(l.resource, &r); err != nil {
			t.Fatal(err)
		}
		n := min(r.Max, l.most)
		args = append(args, "--ulimit", fmt.Sprintf("%s=%d:%d", l.name, n, n))
	}
	return args
}

// buildImage builds deploy/Containerfile from a context of the static
// binary and the CA bundle, as build-image.sh does.
func buildImage(t *testing.T, p *podman, bin string) string {
	t.Helper()
	const bundle = "/etc/ssl/certs/ca-certificates.crt"
	ctx := t.TempDir()
	for _, f := range [][2]string{{bin, "ringcp"}, {bundle, "ca-certificates.crt"}, {"Containerfile", "Containerfile"}} {
		raw, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatalf("the image's %s: %v (ca-certificates installs the bundle)", f[1], err)
		}
		if err := os.WriteFile(filepath.Join(ctx, f[1]), raw, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const tag = "localhost/ringcp:test"
	p.must("build", "--network", "none", "--build-arg", "VERSION=test", "-t", tag, ctx)
	return tag
}
