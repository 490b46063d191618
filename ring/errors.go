package ring

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrUnavailable matches every *UnavailableError: io_uring cannot be used in
// this process, and another I/O path should be taken.
var ErrUnavailable = errors.New("io_uring unavailable")

// Causes of unavailability; each also matches with errors.Is.
var (
	// ErrNotInKernel: io_uring_setup is ENOSYS (kernel < 5.1, built without
	// CONFIG_IO_URING, gVisor, or a seccomp filter that answers ENOSYS).
	ErrNotInKernel = errors.New("io_uring not in this kernel")
	// ErrDisabled: io_uring_setup is EPERM (sysctl kernel.io_uring_disabled,
	// the RHEL 9.3+ default, or the Docker >= 25 / containerd 2 seccomp
	// profile).
	ErrDisabled = errors.New("io_uring switched off")
	// ErrNoLockedMemory: io_uring_setup is ENOMEM, on kernels <= 5.11 that
	// charge rings to RLIMIT_MEMLOCK.
	ErrNoLockedMemory = errors.New("io_uring out of locked memory")
)

// ErrCQLost reports EBADR from io_uring_enter: the kernel dropped
// completions, so requests can no longer be accounted for. It is fatal.
var ErrCQLost = errors.New("io_uring lost completions (EBADR)")

// ErrWrongThread reports EEXIST from io_uring_enter on a SINGLE_ISSUER ring:
// the call came from another OS thread than the one that set the ring up.
var ErrWrongThread = errors.New("io_uring ring used from a thread other than its issuer")

// UnavailableError says why io_uring cannot be used here.
type UnavailableError struct {
	Cause  error         // ErrNotInKernel, ErrDisabled or ErrNoLockedMemory
	Errno  syscall.Errno // what io_uring_setup returned
	Detail string        // what the system says about it, e.g. the sysctl value
}

func (e *UnavailableError) Error() string {
	msg := fmt.Sprintf("%v (io_uring_setup: %v)", e.Cause, e.Errno)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Is makes errors.Is match ErrUnavailable and the specific cause.
func (e *UnavailableError) Is(target error) bool {
	return target == ErrUnavailable || target == e.Cause
}

// Unwrap returns the errno, so errors.Is(err, syscall.EPERM) works too.
func (e *UnavailableError) Unwrap() error { return e.Errno }
