package ring

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/internal/uringtest"
)

// poseAs makes explain see another kernel release and memlock limit.
func poseAs(t *testing.T, release, limit string) {
	oldRelease, oldLimit := kernelRelease, memlockLimit
	kernelRelease = func() string { return release }
	memlockLimit = func() string { return limit }
	t.Cleanup(func() { kernelRelease, memlockLimit = oldRelease, oldLimit })
}

// TestENOMEMAdviceFitsTheKernel: io_uring_setup's ENOMEM means locked
// memory before 5.12 and since 6.14, the memory cgroup in between. The
// advice must fit the kernel it runs on: never "use a kernel >= 5.12" on
// a kernel that is one.
func TestENOMEMAdviceFitsTheKernel(t *testing.T) {
	cases := []struct {
		release   string
		want, not []string
	}{
		{"5.4.0-150-generic", []string{"kernel 5.4 charges the rings to RLIMIT_MEMLOCK", "now 64 KiB", "ulimit -l", "CAP_IPC_LOCK"}, []string{"cgroup"}},
		{"5.11.22", []string{"kernel 5.11 charges the rings to RLIMIT_MEMLOCK"}, []string{"cgroup"}},
		{"5.12.0", []string{"kernel 5.12 charges the rings to the memory cgroup, not to RLIMIT_MEMLOCK"}, []string{"ulimit -l", "now 64 KiB"}},
		{"6.1.0-28-amd64", []string{"kernel 6.1 charges the rings to the memory cgroup"}, []string{"ulimit -l"}},
		{"6.13.12", []string{"memory cgroup"}, []string{"ulimit -l"}},
		{"6.14.0", []string{"kernel 6.14 charges the rings to RLIMIT_MEMLOCK", "now 64 KiB", "CAP_IPC_LOCK"}, []string{"cgroup"}},
		{"6.18.44-fc-v669", []string{"kernel 6.18 charges the rings to RLIMIT_MEMLOCK", "ulimit -l"}, []string{"cgroup"}},
		{"7.2-rc3", []string{"kernel 7.2 charges the rings to RLIMIT_MEMLOCK"}, nil},
		{"", []string{"raise RLIMIT_MEMLOCK (ulimit -l, now 64 KiB) or run with CAP_IPC_LOCK"}, nil},
	}
	for _, c := range cases {
		t.Run(c.release, func(t *testing.T) {
			poseAs(t, c.release, "64 KiB")
			injectSetupErrno(t, syscall.ENOMEM)
			_, err := Setup(8, nil)
			if !errors.Is(err, ErrNoLockedMemory) {
				t.Fatalf("err = %v, want ErrNoLockedMemory", err)
			}
			msg := err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			for _, n := range append(c.not, ">= 5.12") {
				if strings.Contains(msg, n) {
					t.Errorf("%q says %q", msg, n)
				}
			}
		})
	}
}

func TestParseRelease(t *testing.T) {
	for in, want := range map[string][2]int{"6.18.44-fc-v669": {6, 18}, "5.4.0": {5, 4}, "7.2-rc3": {7, 2}, "4.19": {4, 19}} {
		major, minor, ok := parseRelease(in)
		if !ok || major != want[0] || minor != want[1] {
			t.Errorf("parseRelease(%q) = %d, %d, %v; want %v", in, major, minor, ok, want)
		}
	}
	for _, bad := range []string{"", "6", "x.y", "6.x"} {
		if _, _, ok := parseRelease(bad); ok {
			t.Errorf("parseRelease(%q) ok", bad)
		}
	}
}

// TestENOMEMOnThisKernel runs Setup for real as an unprivileged user with
// RLIMIT_MEMLOCK at 0 (prlimit, setpriv). Kernels before 5.12 and since
// 6.14 charge the rings to that limit and refuse: the advice must then
// name the limit and fit the running kernel. Between them the rings do
// not count against it, and Setup succeeds.
func TestENOMEMOnThisKernel(t *testing.T) {
	if os.Getenv("RINGCP_MEMLOCK_CHILD") == "1" {
		runtime.LockOSThread()
		r, err := Setup(8, nil)
		if err == nil {
			r.Close()
			fmt.Println("setup ok")
			return
		}
		fmt.Println("setup failed:", err)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a child as another user")
	}
	for _, tool := range []string{"prlimit", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (util-linux): %v", tool, err)
		}
	}
	uringtest.NeedOn(t)
	bin := worldRunnable(t, os.Args[0])
	out, err := exec.Command("prlimit", "--memlock=0:0", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		"env", "RINGCP_MEMLOCK_CHILD=1", bin, "-test.run=^TestENOMEMOnThisKernel$").CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	major, minor, ok := parseRelease(unameRelease())
	if !ok {
		t.Fatalf("cannot read the kernel release %q", unameRelease())
	}
	charged := major < 5 || major == 5 && minor < 12 || major > 6 || major == 6 && minor >= 14
	got := string(out)
	t.Logf("kernel %d.%d: %s", major, minor, got)
	switch {
	case !charged && !strings.Contains(got, "setup ok"):
		t.Errorf("kernel %d.%d does not charge rings to RLIMIT_MEMLOCK, yet: %s", major, minor, got)
	case charged && !strings.Contains(got, fmt.Sprintf("kernel %d.%d charges the rings to RLIMIT_MEMLOCK (ulimit -l, now 0 KiB)", major, minor)):
		t.Errorf("with ulimit -l 0 on kernel %d.%d: %s", major, minor, got)
	case strings.Contains(got, ">= 5.12") && (major > 5 || major == 5 && minor >= 12):
		t.Errorf("advises a kernel >= 5.12 on %d.%d: %s", major, minor, got)
	}
}

// worldRunnable copies the program at path into a folder anyone may
// enter, so that another user can run it.
func worldRunnable(t *testing.T, path string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ringcp-ring-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ring.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
