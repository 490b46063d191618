package ring

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/internal/uringtest"
)

func injectSetupErrno(t *testing.T, errno syscall.Errno) {
	real := setupSyscall
	t.Cleanup(func() { setupSyscall = real })
	setupSyscall = func(uint32, *params) (int, syscall.Errno) { return -1, errno }
}

func TestUnavailableErrnosAreClassified(t *testing.T) {
	cases := []struct {
		errno syscall.Errno
		cause error
	}{
		{syscall.ENOSYS, ErrNotInKernel},
		{syscall.EPERM, ErrDisabled},
		{syscall.ENOMEM, ErrNoLockedMemory},
	}
	for _, c := range cases {
		t.Run(c.errno.Error(), func(t *testing.T) {
			injectSetupErrno(t, c.errno)
			_, err := Setup(8, nil)
			var ue *UnavailableError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v (%T), want *UnavailableError", err, err)
			}
			if !errors.Is(err, ErrUnavailable) || !errors.Is(err, c.cause) || !errors.Is(err, c.errno) {
				t.Errorf("err = %v: want Is ErrUnavailable, %v and %v", err, c.cause, c.errno)
			}
			for _, other := range []error{ErrNotInKernel, ErrDisabled, ErrNoLockedMemory} {
				if other != c.cause && errors.Is(err, other) {
					t.Errorf("err = %v also matches %v", err, other)
				}
			}
		})
	}
}

// EFAULT is a fault in the caller, not "io_uring is not here": no fallback.
func TestRealFaultIsNotUnavailable(t *testing.T) {
	injectSetupErrno(t, syscall.EFAULT)
	_, err := Setup(8, nil)
	if err == nil || errors.Is(err, ErrUnavailable) || !errors.Is(err, syscall.EFAULT) {
		t.Fatalf("err = %v, want a plain EFAULT error", err)
	}
}

func TestEPERMExplainsSysctlAndSeccomp(t *testing.T) {
	dir := t.TempDir()
	sysctl := filepath.Join(dir, "io_uring_disabled")
	status := filepath.Join(dir, "status")
	os.WriteFile(sysctl, []byte("2\n"), 0o644)
	os.WriteFile(status, []byte("Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t1\n"), 0o644)
	oldSysctl, oldStatus := disabledSysctl, selfStatus
	disabledSysctl, selfStatus = sysctl, status
	t.Cleanup(func() { disabledSysctl, selfStatus = oldSysctl, oldStatus })

	injectSetupErrno(t, syscall.EPERM)
	_, err := Setup(8, nil)
	msg := err.Error()
	for _, want := range []string{"io_uring_disabled=2", "seccomp filter"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// The real thing: with the sysctl at 2 the kernel refuses everyone, root
// included, and Setup must say "switched off".
func TestSysctlDisabledGivesErrDisabled(t *testing.T) {
	uringtest.SwitchOff(t, "2")
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := Setup(8, nil)
	if err == nil {
		r.Close()
		t.Fatal("Setup succeeded with kernel.io_uring_disabled=2")
	}
	if !errors.Is(err, ErrDisabled) || !strings.Contains(err.Error(), "io_uring_disabled=2") {
		t.Fatalf("err = %v, want ErrDisabled naming the sysctl", err)
	}
}
