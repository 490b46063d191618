package fallback

import (
	"syscall"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/eintr"
	"golang.org/x/sys/unix"
)

// Do performs one request on descriptor fd with pread, pwrite, fdatasync
// or fallocate, on the calling goroutine, and reports it as an io_uring
// CQE would: a short count as it is (the engine retries the rest), an
// error as its errno. The pool's workers run it for every end that is a
// descriptor.
func Do(fd int, q engine.Request) engine.Completion {
	// EINTR: a signal (Go's preemption among them) arrived before anything
	// moved; the same call again is exact.
	n, err := eintr.Retry(func() (int, error) {
		switch q.Op {
		case engine.OpRead:
			return unix.Pread(fd, q.Buf, q.Off)
		case engine.OpWrite:
			return unix.Pwrite(fd, q.Buf, q.Off)
		case engine.OpSync:
			return 0, unix.Fdatasync(fd)
		case engine.OpFallocate:
			return 0, unix.Fallocate(fd, q.Mode, q.Off, q.Len)
		}
		return 0, syscall.EINVAL
	})
	c := engine.Completion{Slot: q.Slot, N: max(n, 0)}
	if err != nil {
		c.Errno = errnoOf(err)
	}
	return c
}
