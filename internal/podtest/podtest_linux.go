// Package podtest runs a process as a container of a CDI importer pod
// sees its world, without a container runtime: in a mount namespace of its
// own (unshare -m, private propagation), chrooted into a root of its own
// (a tmpfs) where the host's /usr, /etc, /proc, /sys and /tmp are bound,
// /dev is a tmpfs with the usual nodes, the block volume is a node at
// /dev/cdi-block-volume (made with the device's numbers, as a runtime makes
// a volumeDevice), the filesystem volume is bound at /data, scratch space
// at /scratch and the termination log at /dev/termination-log. Nothing of
// it is visible outside the process: the host's /dev and / are untouched,
// and the namespace goes with the process (kill -9 included). Root only.
//
// The network is the host's: servers the test starts on 127.0.0.1 are
// reachable from the pod.
package podtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Pod is one importer container's view. Empty fields are left out.
type Pod struct {
	// Block is a host block device that appears at /dev/cdi-block-volume.
	Block string
	// Data is a host directory (the mounted filesystem volume) bound at
	// /data.
	Data string
	// Scratch is a host directory bound at /scratch.
	Scratch string
	// TerminationLog is the host file bound at /dev/termination-log; New
	// makes an empty one, writable by anyone (the kubelet's file is).
	TerminationLog string
	// User is "UID:GID" to run as (CDI's importer runs as 107:107); ""
	// is root. The block device node is then owned by it, as a runtime
	// with device_ownership_from_security_context makes it.
	User string

	root string // where the pod's root is mounted, on the host's side
}

// New makes a pod with an empty termination log; the test sets the
// volumes.
func New(t testing.TB) *Pod {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mount namespaces, mknod and chroot")
	}
	for _, tool := range []string{"unshare", "chroot", "mknod", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (util-linux, coreutils): %v", tool, err)
		}
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "termination-log")
	if err := os.WriteFile(log, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(log, 0o666); err != nil { // past the umask
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return &Pod{TerminationLog: log, root: root}
}

// Root is where the pod's root is mounted, seen from the host's mount
// namespace: an empty directory there.
func (p *Pod) Root() string { return p.root }

// Command returns the command that runs name (an absolute path) with
// args inside the pod. Its environment (cmd.Env) is the process's: set
// CDI's variables there. The process keeps its PID from start to end
// (unshare, sh and chroot each exec the next), so cmd.Process is the
// importer itself, to be signalled or killed.
func (p *Pod) Command(name string, args ...string) (*exec.Cmd, error) {
	script, err := p.script()
	if err != nil {
		return nil, err
	}
	argv := append([]string{"--mount", "--propagation", "private", "--", "/bin/sh", "-ec", script, "pod", name}, args...)
	return exec.Command("unshare", argv...), nil
}

// script is the shell program that builds the pod's world, then becomes
// name.
func (p *Pod) script() (string, error) {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	r := quote(p.root)
	line("/usr/bin/mount -t tmpfs -o mode=0755 ringcp-pod %s", r)
	line("cd %s", r)
	line("/usr/bin/mkdir usr etc proc sys tmp dev data scratch run")
	for _, l := range [][2]string{{"usr/bin", "bin"}, {"usr/sbin", "sbin"}, {"usr/lib", "lib"}, {"usr/lib64", "lib64"}} {
		line("/usr/bin/ln -s %s %s", l[0], l[1])
	}
	// /tmp first: its copy then holds this root as an empty skeleton,
	// not the mounts made in it below.
	for _, dir := range []string{"tmp", "usr", "etc", "proc", "sys"} {
		line("/usr/bin/mount --rbind /%s %s", dir, dir)
	}
	line("/usr/bin/mount -t tmpfs -o mode=0755,nosuid ringcp-dev dev")
	for _, n := range []struct {
		name         string
		major, minor int
	}{{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}} {
		line("/usr/bin/mknod -m 666 dev/%s c %d %d", n.name, n.major, n.minor)
	}
	line("/usr/bin/ln -s /proc/self/fd dev/fd")
	for i, std := range []string{"stdin", "stdout", "stderr"} {
		line("/usr/bin/ln -s /proc/self/fd/%d dev/%s", i, std)
	}
	if err := p.blockNode(line); err != nil {
		return "", err
	}
	if p.TerminationLog != "" {
		line("/usr/bin/touch dev/termination-log")
		line("/usr/bin/mount --bind %s dev/termination-log", quote(p.TerminationLog))
	}
	for _, bind := range [][2]string{{p.Data, "data"}, {p.Scratch, "scratch"}} {
		if bind[0] != "" {
			line("/usr/bin/mount --bind %s %s", quote(bind[0]), bind[1])
		}
	}
	chroot := "exec /usr/sbin/chroot"
	if p.User != "" {
		chroot += " --userspec=" + quote(p.User)
	}
	line(`%s %s "$@"`, chroot, r)
	return b.String(), nil
}

// blockNode makes /dev/cdi-block-volume with the numbers of p.Block.
func (p *Pod) blockNode(line func(string, ...any)) error {
	if p.Block == "" {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Stat(p.Block, &st); err != nil {
		return fmt.Errorf("block volume %s: %w", p.Block, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return fmt.Errorf("block volume %s is not a block device", p.Block)
	}
	line("/usr/bin/mknod -m 660 dev/cdi-block-volume b %d %d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	if p.User != "" {
		line("/usr/bin/chown %s dev/cdi-block-volume", quote(p.User))
	}
	return nil
}

// quote makes s one word for sh.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
