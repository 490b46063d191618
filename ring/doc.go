// Package ring is a small io_uring binding on golang.org/x/sys/unix, without
// cgo and without go:linkname, so that plain go build, go test and go install
// work with the stock toolchain.
//
// It is cut like liburing: setup and teardown, submission, completion, prep
// helpers, registration and the raw syscalls each sit in a file of their own.
// All shared-memory access to the rings goes through sq_linux.go and
// cq_linux.go, and every atomic there says what kernel access it pairs with.
//
// # Contract
//
// Thread rule. A Ring is not safe for concurrent use: one goroutine owns it.
// When the ring was set up with FlagSingleIssuer (which FlagDeferTaskrun
// needs), the kernel accepts io_uring_enter only from the OS thread that
// created the ring, so the owner must call runtime.LockOSThread before Setup
// and keep every call on that goroutine; a call from another thread fails
// with ErrWrongThread.
//
// Buffer rule. Memory that the kernel reads or writes asynchronously (the
// buffers of READ/WRITE requests, registered fixed buffers, iovec arrays of
// READV/WRITEV) must not move and must not be freed until the request's
// completion has been reaped. Use memory from an anonymous mmap, never the Go
// heap: the garbage collector neither moves nor frees it, and
// REGISTER_BUFFERS rejects file-backed shared mappings with EFAULT. Close
// does not wait for requests in flight: drain them first.
//
// Error kinds. Setup returns an *UnavailableError (errors.Is(err,
// ErrUnavailable) is true) when io_uring cannot be used here at all: the
// kernel lacks it (ErrNotInKernel, ENOSYS), it is switched off or blocked by
// sysctl kernel.io_uring_disabled or a seccomp filter (ErrDisabled, EPERM),
// or locked memory is exhausted (ErrNoLockedMemory, ENOMEM). Callers fall
// back to another I/O path on those. Every other error is a real fault and
// unwraps to its errno. ErrCQLost (EBADR from the kernel) means completions
// were dropped and the ring's bookkeeping can no longer be trusted.
package ring
