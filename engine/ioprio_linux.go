package engine

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// ioprioWhoProcess with who 0 names the calling thread: an I/O priority
// belongs to a thread (its io_context), not to the whole process.
const ioprioWhoProcess = 1

// SetThreadIOPrio gives the calling OS thread the I/O priority p, for the
// reads and writes it makes itself (pread, pwrite, fdatasync). The caller
// must have locked its goroutine to the thread (runtime.LockOSThread) and
// keep it locked until the thread ends, so that no other goroutine runs
// there with p: a goroutine that exits locked takes its thread with it.
// The real-time class needs CAP_SYS_ADMIN or CAP_SYS_NICE (EPERM).
func SetThreadIOPrio(p IOPrio) error {
	_, _, e := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, uintptr(p))
	if e != 0 {
		return fmt.Errorf("ioprio_set %s: %w", p, e)
	}
	return nil
}

// ThreadIOPrio reads the I/O priority of thread tid (0: the calling one).
func ThreadIOPrio(tid int) (IOPrio, error) {
	r, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, uintptr(tid), 0)
	if e != 0 {
		return 0, fmt.Errorf("ioprio_get: %w", e)
	}
	return IOPrio(r), nil
}

// LockThreadIOPrio locks the calling goroutine to its thread and gives the
// thread priority p (the pool's workers; copier's check of what the
// kernel allows). release gives the thread its old
// priority back and unlocks it; should that fail, the goroutine stays
// locked, so that the thread ends with it and the priority never reaches
// another goroutine. On an error nothing was changed and nothing is
// locked.
func LockThreadIOPrio(p IOPrio) (release func(), err error) {
	runtime.LockOSThread()
	old, err := ThreadIOPrio(0)
	if err == nil {
		err = SetThreadIOPrio(p)
	}
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return func() {
		if SetThreadIOPrio(old) == nil {
			runtime.UnlockOSThread()
		}
	}, nil
}
