package engine

// IOEnd is an end that moves its own bytes: an NBD export (package
// nbdend), and the ends to come (an object over HTTP, a stream, an image
// format over any of them). It stands in Job.Ends where a file or device
// would stand in Job.Files. A backend with the AnyEnd capability (the
// pool, package fallback) serves every Request that names it through these
// methods instead of a system call on a descriptor, on its worker
// goroutines: OpRead by ReadAt, OpWrite by WriteAt, OpSync by Flush,
// OpFallocate by Zero.
//
// The methods may be called from several goroutines at once (unless
// IOInfo.Sequential says otherwise), each with its own buffer. They
// answer as the system calls they replace would:
//
//   - ReadAt and WriteAt return how many bytes moved; fewer than asked
//     with a nil error is a short transfer, which the engine asks again for
//     the rest. A read that meets the end's end returns what was there,
//     with a nil error or io.EOF (both read as pread's short count).
//   - An error unwraps to the syscall.Errno the engine reports (errors.As),
//     as an *OpError naming the op, the end and the offset; an error
//     without one reads as EIO. EAGAIN and EINTR are retried by the engine
//     after a backoff.
//   - Zero makes [off, off+n) read as zeros. punch allows the end to
//     deallocate the range (fallocate's PUNCH_HOLE), otherwise the range
//     stays allocated (ZERO_RANGE). EOPNOTSUPP (or EINVAL, ENOSYS) says the
//     end cannot, and the engine then tries the other mode, then writes
//     zeros from its own buffers.
//   - Flush makes every write that completed before it durable; only a
//     Flush that succeeded makes the copy count as synced.
//
// Sizes and alignment are the caller's to measure before the copy: an
// IOEnd is opened and checked by the kind of end that made it (package
// copier) and closed by it, never by the backend.
type IOEnd interface {
	Endpoint
	ReadAt(p []byte, off int64) (n int, err error)
	WriteAt(p []byte, off int64) (n int, err error)
	Zero(off, n int64, punch bool) error
	Flush() error
	// IOInfo says how the end is reached, for the backend.
	IOInfo() IOInfo
}

// IOInfo describes an IOEnd to the backend that serves it.
type IOInfo struct {
	// Transport names how its bytes move ("nbd"): the backend reports
	// itself by the transports of the ends it serves (Report.Engine in
	// copier), rather than as the pool.
	Transport string
	// Detail says how it is reached, for -v and --json ("nbd://h/x over 4
	// connection(s), block sizes 1/4096/33554432").
	Detail string
	// Sequential: the end can only be read in order, each read starting
	// where the one before ended, and not concurrently (a stream: stdin,
	// a pipe, a decompressor). The backend then serves its requests one
	// at a time on a goroutine of their own, in offset order: it reads
	// ahead over a gap, and keeps what it read there for the requests
	// that come late (a short read's rest, a retry), as far back as the
	// copy's window of buffers reaches (the engine never has requests
	// further apart in flight). A request for bytes further back fails
	// with ESPIPE. Writes to a sequential end fail with EBADF.
	Sequential bool
}

// Punches says whether an OpFallocate request may leave a hole
// (fallocate's PUNCH_HOLE: IOEnd.Zero's punch) rather than zero in place
// (ZERO_RANGE).
func (q Request) Punches() bool { return q.Mode&fallocPunchHole != 0 }
