package fallback

import (
	"errors"
	"io"
	"syscall"

	"github.com/ringcp/ringcp/engine"
)

// doEnd performs one request on an end that moves its own bytes, on the
// calling worker, and reports it as Do reports a system call: a read that
// meets the end's end comes back short, an error as its errno.
func doEnd(e engine.IOEnd, q engine.Request) engine.Completion {
	var n int
	var err error
	switch q.Op {
	case engine.OpRead:
		n, err = e.ReadAt(q.Buf, q.Off)
		return doneRead(q.Slot, max(n, 0), err)
	case engine.OpWrite:
		n, err = e.WriteAt(q.Buf, q.Off)
	case engine.OpSync:
		err = e.Flush()
	case engine.OpFallocate:
		// Mode 0 (allocate) never comes as a request: the engine
		// reserves through Endpoint.Reserve.
		err = e.Zero(q.Off, q.Len, q.Punches())
	default:
		err = syscall.EINVAL
	}
	c := engine.Completion{Slot: q.Slot, N: max(n, 0)}
	if err != nil {
		c.N, c.Errno = 0, errnoOf(err)
	}
	return c
}

// doneRead reports a read: io.EOF is a short count, as pread's at the end
// of a file.
func doneRead(slot, n int, err error) engine.Completion {
	c := engine.Completion{Slot: slot, N: n}
	if err != nil && !errors.Is(err, io.EOF) {
		c.N, c.Errno = 0, errnoOf(err)
	}
	return c
}

// errnoOf is the errno an error carries (errors.As finds it through
// wrapping, *nbd.Error's included), EIO when it carries none.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) && errno != 0 {
		return errno
	}
	return syscall.EIO
}
