package blocksync

import (
	"fmt"
	"syscall"
)

// OpError is a failed I/O on an end: the op ("read", "write", "punch
// hole", "fsync"...), the path, the byte offset and the cause, usually a
// syscall.Errno; errors.Is(err, syscall.EIO) works.
type OpError struct {
	Op     string
	Path   string
	Offset int64
	Err    error
}

func (e *OpError) Error() string {
	msg := e.Err.Error()
	if errno, ok := e.Err.(syscall.Errno); ok && errnoName(errno) != "" {
		msg = fmt.Sprintf("%v (%s)", errno, errnoName(errno))
	}
	return fmt.Sprintf("%s %s at offset %d: %s", e.Op, e.Path, e.Offset, msg)
}

func (e *OpError) Unwrap() error { return e.Err }

// Kind says what sort of refusal a RefusedError is. The values are those
// of copier.Kind, so that a front end maps them the same way.
type Kind string

// Kinds of refusal.
const (
	KindBadInput     Kind = "bad_input"     // a granule or option out of range
	KindNotFound     Kind = "not_found"     // SRC, or DST's folder, does not exist
	KindNotSupported Kind = "not_supported" // neither a regular file nor a block device; not Linux
	KindPermission   Kind = "permission"    // DST may not be written, SRC not read
	KindMounted      Kind = "mounted"       // DST or what shares its bytes is mounted or swap
	KindInUse        Kind = "in_use"        // DST is held by another program or driver
	KindLocked       Kind = "locked"        // QEMU's or another program's locks on DST, or SRC being written
	KindOverlap      Kind = "overlap"       // SRC and DST are the same bytes
	KindTooSmall     Kind = "too_small"     // a block device DST smaller than SRC
	KindChanged      Kind = "changed"       // DST was replaced between its checks and its open
)

// RefusedError is a sync refused before anything was written.
type RefusedError struct {
	Kind   Kind
	Path   string
	Reason string
	Err    error // the errno behind it, if any
}

func (e *RefusedError) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

func (e *RefusedError) Unwrap() error { return e.Err }

func refuse(kind Kind, path, reason string, err error) *RefusedError {
	return &RefusedError{Kind: kind, Path: path, Reason: reason, Err: err}
}
