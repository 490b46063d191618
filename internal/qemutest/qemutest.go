// Package qemutest runs QEMU's tools (qemu-nbd, qemu-io, qemu-img) for
// tests that check ringcp against the locks QEMU takes, and stops what it
// started when the test ends. A missing tool skips the test with the
// reason (Debian: qemu-utils).
package qemutest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Need skips the test unless every tool is installed.
func Need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian: qemu-utils): %v", tool, err)
		}
	}
}

// NBD serves image with qemu-nbd (raw, on a socket in a temp dir; args
// such as -r) until stop or the end of the test, and returns its pid.
// --fork returns once the image is open and locked.
func NBD(t testing.TB, image string, args ...string) (pid int, stop func()) {
	t.Helper()
	pid, out, err := startNBD(t, image, args...)
	if err != nil {
		t.Fatalf("qemu-nbd %s: %v\n%s", image, err, out)
	}
	var once sync.Once
	stop = func() { once.Do(func() { stopPid(t, pid) }) }
	t.Cleanup(stop)
	return pid, stop
}

// NBDRefused: qemu-nbd must fail to open image on account of a lock.
func NBDRefused(t testing.TB, image string, args ...string) {
	t.Helper()
	pid, out, err := startNBD(t, image, args...)
	if err == nil {
		stopPid(t, pid)
		t.Errorf("qemu-nbd %v %s served it; want it refused by a lock", args, image)
	} else if !strings.Contains(out, "lock") {
		t.Errorf("qemu-nbd %v %s failed, but not on a lock: %v\n%s", args, image, err, out)
	}
}

// startNBD starts qemu-nbd and reads its pid; out is what it printed.
func startNBD(t testing.TB, image string, args ...string) (int, string, error) {
	Need(t, "qemu-nbd")
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	all := append([]string{"--fork", "--pid-file", pidFile, "-k", filepath.Join(dir, "sock"), "-f", "raw"}, args...)
	out, err := exec.Command("qemu-nbd", append(all, image)...).CombinedOutput()
	if err != nil {
		return 0, string(out), err
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, string(out), err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, string(out), err
}

// stopPid ends a process the test started (qemu-nbd has forked away from
// us, so it is polled, not waited for).
func stopPid(t testing.TB, pid int) {
	syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 200; i++ {
		if exited(pid) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("pid %d ignored SIGTERM for 5 s; killed", pid)
}

// exited says pid has ended: it is gone, or a zombie. qemu-nbd --fork's
// daemon is PID 1's child, and this machine's PID 1 (process_api) reaps
// it seconds later, over 5 s on a loaded machine: a zombie still takes
// signal 0, and a qemu-nbd that had ended was reported as one that
// ignored SIGTERM.
func exited(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// "pid (comm) S ...": comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z'
}

// Refuses runs a QEMU tool that must fail on account of a lock.
func Refuses(t testing.TB, tool string, args ...string) {
	t.Helper()
	RefusesWith(t, "lock", tool, args...)
}

// RefusesWith runs a QEMU tool that must fail with want in its message
// (`Failed to get "write" lock`).
func RefusesWith(t testing.TB, want, tool string, args ...string) {
	t.Helper()
	Need(t, tool)
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err == nil {
		t.Errorf("%s %s succeeded; want it refused by a lock:\n%s", tool, strings.Join(args, " "), out)
		return
	}
	if !strings.Contains(string(out), want) {
		t.Errorf("%s %s failed without %q: %v\n%s", tool, strings.Join(args, " "), want, err, out)
	}
}

// Works runs a QEMU tool that must succeed.
func Works(t testing.TB, tool string, args ...string) {
	t.Helper()
	Need(t, tool)
	if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		t.Errorf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
}

// DiskImage makes a real disk image of one kind with qemu-img in dir and
// returns its path: qcow2, qcow, vmdk, vmdk-flat (a descriptor file and
// its flat extent), vhdx, vdi, vpc (dynamic VHD), vpc-fixed, qed, luks.
func DiskImage(t testing.TB, dir, kind string) string {
	t.Helper()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skipf("qemu-img is not installed (Debian: qemu-utils): %v", err)
	}
	path := filepath.Join(dir, "img."+kind)
	format, args := kind, []string(nil)
	switch kind {
	case "vmdk-flat":
		format, args = "vmdk", []string{"-o", "subformat=monolithicFlat"}
	case "vpc-fixed":
		format, args = "vpc", []string{"-o", "subformat=fixed"}
	case "luks":
		// iter-time 100 ms: with less, a loaded machine makes QEMU's
		// PBKDF benchmark fail ("Unable to get accurate CPU usage").
		args = []string{"--object", "secret,id=sec0,data=ringcp-test", "-o", "key-secret=sec0,iter-time=100"}
	}
	cmd := append(append([]string{"create", "-q", "-f", format}, args...), path, "1M")
	var out []byte
	var err error
	for try := 0; try < 3; try++ { // the PBKDF benchmark can still miss under load
		if out, err = exec.Command("qemu-img", cmd...).CombinedOutput(); err == nil {
			return path
		}
	}
	t.Fatalf("qemu-img %s: %v\n%s", strings.Join(cmd, " "), err, out)
	return path
}
