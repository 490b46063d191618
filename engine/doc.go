// Package engine copies a byte range from one file or block device to
// another with a fixed window of slots in flight, through a Backend.
//
// # Contract
//
// Run plans the range in blocks, gives each block to a free slot, and
// cycles every slot read -> write -> free, with completions in any order.
// Short reads and writes are resubmitted for their remainder (aligned down
// when the file is opened with O_DIRECT); -EAGAIN and -EINTR are resubmitted
// as they are; a read that finds end of file inside the planned range means
// the source shrank, and fails the copy. A last block whose length is not a
// multiple of DST's direct I/O alignment is written through Job.DstTail, a
// descriptor without O_DIRECT, after every other write has completed, so
// the page cache never holds a page that an O_DIRECT write is changing.
//
// Success is returned only after every write completed and, with Job.Sync,
// DST was fdatasync'ed after the last write completion. The first error
// stops new submissions; what is in flight is drained before Run returns an
// *OpError naming the op, path, offset and errno. A cancelled context stops
// new reads, lets writes in flight finish, syncs them, and returns an error
// wrapping ctx.Err().
//
// Run locks its goroutine to one OS thread for the whole copy and creates
// the backend on it, as io_uring SINGLE_ISSUER rings require. Buffers are
// the caller's (align.AllocBuffers) and must stay mapped until Run returns.
//
// A Backend moves bytes: Submit queues requests, Reap waits for
// completions. The io_uring backend lives here (NewUring); the pread/pwrite
// pool in package fallback. A third backend is one new package.
package engine
