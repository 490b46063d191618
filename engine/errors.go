package engine

import (
	"errors"
	"fmt"
	"syscall"
	"time"
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

// RetryError is the cause of an *OpError for a request that kept coming
// back -EAGAIN or -EINTR until the engine gave it up (see retry.go). It
// unwraps to the errno.
type RetryError struct {
	Errno   syscall.Errno
	Tries   int
	Elapsed time.Duration // since the first of the failures in a row
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("%v (%s) %d times in a row over %v without progress; given up",
		e.Errno, errnoName(e.Errno), e.Tries, e.Elapsed.Round(time.Millisecond))
}

func (e *RetryError) Unwrap() error { return e.Errno }

// ErrUndrained matches an error after which requests of the copy may still
// be in flight in the kernel, because the backend failed and could not be
// drained (a dead ring): DST may still change after Run returned, and the
// kernel may still use the copy's buffers and descriptors. The caller must
// neither free the buffers nor close the descriptors, and must report DST
// as partial and possibly still changing; Copy.Close leaves the backend
// open for the same reason. Only leaking is safe then.
var ErrUndrained = errors.New("requests may still be in flight")

// UndrainedError is what Run returns when it could not drain: the error
// that stopped the copy (which it unwraps to) and how many requests were
// still in flight. errors.Is(err, ErrUndrained) matches it.
type UndrainedError struct {
	InFlight int
	Err      error
}

func (e *UndrainedError) Error() string {
	return fmt.Sprintf("%v; %d requests could not be reaped and may still change DST (their buffers and descriptors are left allocated)",
		e.Err, e.InFlight)
}

func (e *UndrainedError) Is(target error) bool { return target == ErrUndrained }

func (e *UndrainedError) Unwrap() error { return e.Err }

// errnoName gives the symbolic name admins search for, like EIO.
func errnoName(e syscall.Errno) string {
	if n := sysErrnoName(e); n != "" {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}
