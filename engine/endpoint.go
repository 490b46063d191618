package engine

import (
	"errors"
	"fmt"
)

// Endpoint is one end of a copy (SRC, DST, or DST's buffered tail) as the
// planner and the end of a run reach it: where its data is, the fdatasync
// that makes that answer true, reserving room ahead of the writes, setting
// the size, and the switch for an unaligned last write. The bytes
// themselves (reads, writes, zeroing, the barrier) go through the Backend,
// as Requests naming the end's FileID.
//
// A file or block device is a FileEnd, which Job.Files gives every end
// that Job.Ends leaves nil; an end that moves its own bytes is an IOEnd
// (an NBD export is package nbdend's Export).
// Size and alignment are the caller's to measure before the copy (stat
// and align.Probe, the NBD handshake): they are in the Job as Length,
// SrcAlign and DstAlign.
//
// Methods return the plain cause, usually a syscall.Errno: the engine
// wraps it in an *OpError naming the op, the end and the offset.
type Endpoint interface {
	// Name names the end in errors: its path, or its URI.
	Name() string
	// Data finds the first run of data at or after off, before end: it
	// is [start, stop), off <= start <= stop <= end. start == stop says
	// there is no data before stop (an end may look no further in one
	// go: the planner asks again from stop); start == stop == end, none
	// at all. What is not data reads as zeros. An error matching
	// ErrCannotMap says the end cannot tell (everything is then copied as
	// data); any other error fails the copy.
	Data(off, end int64) (start, stop int64, err error)
	// Settle makes Data's answers true of what was written to the end
	// until now (fdatasync: see flushBeforeMapping). An error means they
	// cannot be trusted.
	Settle() error
	// Reserve allocates [off, off+n) before it is written. keepSize
	// leaves the end's size as it is; otherwise the end grows to off+n.
	// EOPNOTSUPP or ENOSYS: the end cannot reserve.
	Reserve(off, n int64, keepSize bool) error
	// Truncate sets the end's size.
	Truncate(size int64) error
	// PrepareTail readies the end for the unaligned last write of a copy,
	// once no other write is in flight (see Job.bufferTail).
	PrepareTail() error
}

// Unreserver is an Endpoint that can give back blocks Reserve allocated
// and nothing has written since: they read as zeros, and given back they
// are a hole again.
type Unreserver interface {
	Unreserve(off, n int64) error
}

// OpNamer is an Endpoint that names the ops done on it in its own terms,
// for errors: an NBD export says "write zeroes" and "flush" where a file
// says "fallocate(PUNCH_HOLE)" and "fdatasync".
type OpNamer interface {
	OpName(q Request) string
}

// OpName is how errors name q's op: its end's own name for it (OpNamer),
// else the system call's.
func (j *Job) OpName(q Request) string {
	if n, ok := j.end(q.File).(OpNamer); ok {
		return n.OpName(q)
	}
	if q.Op == OpFallocate {
		return zeroMethodName(q.Mode)
	}
	return q.Op.String()
}

// Ends are a copy's ends by FileID; nil where Job.Files has the end, or
// where there is none.
type Ends [NumFiles]Endpoint

// ErrCannotMap is matched by Endpoint.Data's error when the end cannot say
// where its data is (SEEK_DATA fails with EINVAL on some FUSE and network
// filesystems).
var ErrCannotMap = errors.New("cannot tell where the data is")

// end is the Endpoint of id: Job.Ends', else a FileEnd of Job.Files', else
// nil (no such end in this job).
func (j *Job) end(id FileID) Endpoint {
	if e := j.Ends[id]; e != nil {
		return e
	}
	if f := j.Files[id]; f != nil {
		return FileEnd{F: f}
	}
	return nil
}

// ends is every end of the job, for the backend.
func (j *Job) ends() Ends {
	var e Ends
	for id := range e {
		e[id] = j.end(FileID(id))
	}
	return e
}

// ErrNotDescriptor is returned by backends that move data only through
// descriptors (io_uring, the pool) for a job with an end that has none.
var ErrNotDescriptor = errors.New("an end of the copy is not a file descriptor")

// DescriptorsOnly fails with ErrNotDescriptor unless every end of s is a
// file or device in Files: a check for backends that can reach nothing
// else.
func (s Setup) DescriptorsOnly() error {
	for id, e := range s.Ends {
		if e != nil && s.Files[id] == nil {
			return fmt.Errorf("%w: %s", ErrNotDescriptor, e.Name())
		}
	}
	return nil
}
