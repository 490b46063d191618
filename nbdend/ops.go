package nbdend

import (
	"errors"
	"io"
	"syscall"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/nbd"
	"golang.org/x/sys/unix"
)

// do performs one engine request on an export, on the calling worker,
// and reports it as pread and pwrite would: a read that meets the
// export's end comes back short, an error as its errno.
func do(cl *nbd.Client, q engine.Request) engine.Completion {
	var n int
	var err error
	switch q.Op {
	case engine.OpRead:
		n, err = cl.ReadAt(q.Buf, q.Off)
		if err == io.EOF {
			err = nil // short at the end of the export, as pread is at a file's
		}
	case engine.OpWrite:
		n, err = cl.WriteAt(q.Buf, q.Off)
	case engine.OpSync:
		err = cl.Flush()
	case engine.OpFallocate:
		err = zero(cl, q)
	default:
		err = syscall.EINVAL
	}
	c := engine.Completion{Slot: q.Slot, N: n}
	if err != nil {
		c.N, c.Errno = 0, errnoOf(err)
	}
	return c
}

// zero makes a range read as zeros for fallocate's two zeroing modes (see
// the package doc). Mode 0 (allocate) never comes as a request: the
// engine reserves through Endpoint.Reserve.
func zero(cl *nbd.Client, q engine.Request) error {
	in := cl.Info()
	if !in.CanZero() {
		// The engine then writes zeros from its own buffers, in parallel,
		// rather than the client one buffer at a time.
		return syscall.EOPNOTSUPP
	}
	var flags nbd.ReqFlags
	switch {
	case q.Mode&unix.FALLOC_FL_PUNCH_HOLE != 0:
		if in.CanFastZero() {
			flags |= nbd.FastZero
		}
	case q.Mode&unix.FALLOC_FL_ZERO_RANGE != 0:
		flags |= nbd.NoHole
	default:
		return syscall.EINVAL
	}
	return cl.Zero(q.Off, q.Len, flags)
}

// errnoOf is the errno of a client error (*nbd.Error carries it), EIO when
// it has none.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EIO
}
