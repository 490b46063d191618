package uringtest

import (
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSwitchOffTwiceRestores: two tests that switch io_uring off at once
// (parallel tests, or test processes of two checkouts) leave the sysctl
// as it was before both. SwitchOff read the old value before it took
// the lock, so the second read the first's "2" while the first held it
// off, waited, and restored that "2" last: io_uring stayed off for the
// machine (found so, with no test running, after e2e runs of two
// checkouts).
func TestSwitchOffTwiceRestores(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to set kernel.io_uring_disabled")
	}
	before, err := os.ReadFile(SysctlPath)
	if err != nil {
		t.Skipf("no io_uring_disabled sysctl on this kernel (< 6.6): %v", err)
	}
	t.Cleanup(func() {
		// Put it back whatever happened, under the lock as SwitchOff does.
		f, err := os.Open(SysctlPath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		unix.Flock(int(f.Fd()), unix.LOCK_EX)
		os.WriteFile(SysctlPath, before, 0o644)
	})
	t.Run("both", func(t *testing.T) {
		first := make(chan struct{})
		t.Run("first", func(t *testing.T) {
			t.Parallel()
			SwitchOff(t, "2")
			close(first)
			time.Sleep(200 * time.Millisecond) // the second reads meanwhile
		})
		t.Run("second", func(t *testing.T) {
			t.Parallel()
			<-first
			SwitchOff(t, "2")
		})
	})
	after, err := os.ReadFile(SysctlPath)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(after)), strings.TrimSpace(string(before)); got != want {
		t.Errorf("io_uring_disabled %s after two SwitchOff, was %s", got, want)
	}
}
