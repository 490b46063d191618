// Package uringtest coordinates tests that switch io_uring off for the whole
// machine with those that need it on. go test runs packages as parallel
// processes, and sysctl kernel.io_uring_disabled is global: a test that
// flips it holds an exclusive flock, a test that needs io_uring holds a
// shared one, so neither sees the other half-way. The lock is on the
// sysctl's own file, so that tests create no lock file of their own.
package uringtest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/eintr"

	"golang.org/x/sys/unix"
)

// SysctlPath is the knob: 0 on, 1 only for io_uring_group, 2 off (6.6+).
const SysctlPath = "/proc/sys/kernel/io_uring_disabled"

// legacyLock is where checkouts from before the lock moved to the sysctl
// take it: taken too where an older run left it, never made.
var legacyLock = filepath.Join(os.TempDir(), "ringcp-io_uring-sysctl.lock")

// NeedOn holds a shared lock until the test ends, so no other test process
// switches io_uring off meanwhile.
func NeedOn(t testing.TB) {
	t.Helper()
	lock(t, unix.LOCK_SH)
}

// SwitchOff sets kernel.io_uring_disabled to value for the rest of the test
// and restores the old value after it. It skips with the reason when not
// root or when this kernel has no such sysctl.
func SwitchOff(t testing.TB, value string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to set kernel.io_uring_disabled")
	}
	if _, err := os.Stat(SysctlPath); err != nil {
		t.Skipf("no io_uring_disabled sysctl on this kernel (< 6.6): %v", err)
	}
	lock(t, unix.LOCK_EX)
	// The old value is read under the lock: read before, it may be
	// another test's "2" while that one holds io_uring off, and restored
	// after that test restored its own, it left io_uring off.
	old, err := os.ReadFile(SysctlPath)
	if err != nil {
		t.Fatalf("read %s: %v", SysctlPath, err)
	}
	if err := os.WriteFile(SysctlPath, []byte(value), 0o644); err != nil {
		t.Fatalf("set %s=%s: %v", SysctlPath, value, err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(SysctlPath, []byte(strings.TrimSpace(string(old))), 0o644); err != nil {
			t.Errorf("restore %s: %v", SysctlPath, err)
		}
	})
}

// OnlyForAdmin sets kernel.io_uring_disabled to 1 for the rest of the
// test: only a process with CAP_SYS_ADMIN (or in io_uring_group) can set
// up a ring. A test that needs a ringcp without io_uring runs it as
// another user or without that capability, and the tests of other
// packages, root with every capability, keep io_uring meanwhile: one that
// did not take NeedOn failed while another package held it at 2.
func OnlyForAdmin(t testing.TB) {
	t.Helper()
	SwitchOff(t, "1")
	group, err := os.ReadFile(filepath.Join(filepath.Dir(SysctlPath), "io_uring_group"))
	if err == nil && strings.TrimSpace(string(group)) != "-1" {
		t.Logf("io_uring_group is %s: its members keep io_uring", strings.TrimSpace(string(group)))
	}
}

// lock takes a flock held until the test's cleanup; cleanups run last in,
// first out, so a restore registered after it runs before the unlock.
// Without the sysctl (a kernel before 6.6) nothing can switch io_uring
// off, and there is nothing to lock.
func lock(t testing.TB, how int) {
	t.Helper()
	for _, path := range []string{SysctlPath, legacyLock} {
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatalf("open lock %s: %v", path, err)
		}
		err = eintr.RetryErr(func() error { return unix.Flock(int(f.Fd()), how) })
		if err != nil {
			f.Close()
			t.Fatalf("flock %s: %v", path, err)
		}
		t.Cleanup(func() { f.Close() })
	}
}
