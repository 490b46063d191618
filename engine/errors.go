package engine

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// OpError is a failed I/O: the op, the path, the byte offset and the cause,
// which is usually a syscall.Errno. errors.Is(err, syscall.ENOSPC) works.
type OpError struct {
	Op     string
	Path   string
	Offset int64
	Err    error
}

func (e *OpError) Error() string {
	msg := e.Err.Error()
	if errno, ok := e.Err.(syscall.Errno); ok {
		msg = fmt.Sprintf("%v (%s)", errno, errnoName(errno))
	}
	return fmt.Sprintf("%s %s at offset %d: %s", e.Op, e.Path, e.Offset, msg)
}

func (e *OpError) Unwrap() error { return e.Err }

// ErrSourceShrank: a read found end of file inside the planned range, so
// SRC was truncated while it was copied.
var ErrSourceShrank = errors.New("source ended early (it shrank during the copy?)")

// errShortWrite: a write moved no bytes and returned no error.
var errShortWrite = errors.New("write moved no bytes")

// errnoName gives the symbolic name admins search for, like EIO.
func errnoName(e syscall.Errno) string {
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}
