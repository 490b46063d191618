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
	Need(t, "qemu-nbd")
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	all := append([]string{"--fork", "--pid-file", pidFile, "-k", filepath.Join(dir, "sock"), "-f", "raw"}, args...)
	if out, err := exec.Command("qemu-nbd", append(all, image)...).CombinedOutput(); err != nil {
		t.Fatalf("qemu-nbd %s: %v\n%s", image, err, out)
	}
	b, err := os.ReadFile(pidFile)
	pid, err2 := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || err2 != nil {
		t.Fatalf("qemu-nbd pid file: %v %v", err, err2)
	}
	var once sync.Once
	stop = func() { once.Do(func() { stopPid(t, pid) }) }
	t.Cleanup(stop)
	return pid, stop
}

// stopPid ends a process the test started (qemu-nbd has forked away from
// us, so it is polled, not waited for).
func stopPid(t testing.TB, pid int) {
	syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 200; i++ {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("pid %d ignored SIGTERM for 5 s; killed", pid)
}

// Refuses runs a QEMU tool that must fail on account of a lock.
func Refuses(t testing.TB, tool string, args ...string) {
	t.Helper()
	Need(t, tool)
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err == nil {
		t.Errorf("%s %s succeeded; want it refused by a lock:\n%s", tool, strings.Join(args, " "), out)
		return
	}
	if !strings.Contains(string(out), "lock") {
		t.Errorf("%s %s failed, but not on a lock: %v\n%s", tool, strings.Join(args, " "), err, out)
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
