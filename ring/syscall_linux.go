package ring

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The three raw system calls. Syscall (not RawSyscall) so the Go scheduler
// knows a thread may block in io_uring_enter while it waits for completions.

// setupSyscall is a variable so tests can inject the errnos of kernels and
// sandboxes that refuse io_uring (ENOSYS, EPERM, ENOMEM).
var setupSyscall = func(entries uint32, p *params) (int, syscall.Errno) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	return int(fd), errno
}

// enterSyscall is a variable so tests can play the kernel's EBUSY/EAGAIN
// and a ring that fails. arg is a getEventsArg when flags has enterExtArg,
// else nil.
var enterSyscall = func(fd int, toSubmit, minComplete uint32, flags uint32, arg *getEventsArg) (int, syscall.Errno) {
	size := uintptr(0)
	if arg != nil {
		size = unsafe.Sizeof(*arg)
	}
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit),
		uintptr(minComplete), uintptr(flags), uintptr(unsafe.Pointer(arg)), size)
	return int(n), errno
}

func registerSyscall(fd int, opcode uint32, arg unsafe.Pointer, nrArgs uint32) (int, syscall.Errno) {
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), uintptr(opcode),
		uintptr(arg), uintptr(nrArgs), 0, 0)
	return int(n), errno
}
