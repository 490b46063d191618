// Package engine copies a byte range from one file or block device to
// another with a window of slots in flight, through a Backend.
//
// # Contract
//
// Run plans the range in blocks, gives each block to a slot of its Budget,
// and cycles every slot read -> write -> free, with completions in any
// order.
// Short reads and writes are resubmitted for their remainder (aligned down
// when the file is opened with O_DIRECT); -EAGAIN and -EINTR are resubmitted
// as they are after a backoff (1 ms doubling to 100 ms, waited in Reap's
// timeout, never by sleeping over other completions), and fail the copy
// with a *RetryError after 100 in a row or 30 s without progress; a read
// that finds end of file inside the planned range means the source shrank,
// and fails the copy. A last block whose length is not a
// multiple of DST's direct I/O alignment is written after every other write
// has completed, through Job.Files[FileDstTail] when given, else on DST's
// own descriptor with O_DIRECT switched off (F_SETFL), so the page cache
// never holds a page that an O_DIRECT write is changing.
//
// Success is returned only after every write completed and, with Job.Sync,
// DST was fdatasync'ed after the last write completion. The first error
// stops new submissions; what is in flight is drained before Run returns an
// *OpError naming the op, path, offset and errno. A cancelled context stops
// new reads at once (a read being retried is dropped), lets writes in
// flight finish (one being retried gets two seconds of grace, then its
// chunk is abandoned), syncs them, and returns a *CanceledError wrapping
// ctx.Err().
//
// When the backend itself fails (Submit or Reap returns an error), Run
// keeps reaping until nothing is in flight, so that DST stops changing and
// the buffers are no longer used once it returns. A backend that keeps
// failing (a ring that lost completions, or one driven from the wrong
// thread) cannot be drained: Run then returns an *UndrainedError
// (errors.Is(err, ErrUndrained)), Stats.InFlight says how many requests
// may still run, DST is left as it is (not cut back), and Close leaves the
// backend open. The caller must then leak the buffers and the files rather
// than free or close them, and report DST as partial and possibly still
// changing.
//
// Run locks its goroutine to one OS thread for the whole copy and creates
// the backend on it, as io_uring SINGLE_ISSUER rings require. Open does
// that part alone, so a caller acquires everything before it changes DST
// (then Copy.Run, or Copy.Finish after a filesystem's copy offload). Buffers
// are the caller's (align.AllocBuffers) and must stay mapped until Run
// returns.
//
// # Sharing and watching
//
//   - Several copies may run at once, each on its own goroutine and
//     backend, sharing one Budget of slots: one memory and queue-depth
//     budget, handed out in fair shares (budget.go). Its window, the
//     slots out and the size of a request, is decided by one Controller
//     from the latency the copies measure of their own requests, and can
//     change while they run (window.go).
//   - Job.Rate caps the bytes moved per second, shared by copies or not,
//     and adjustable while they run (pace.go); Job.SharedRate is a second
//     cap, for a copy that has its own and shares one with others. No wait
//     sleeps: each ends at once when the copy is stopped, and when the
//     caps or the window change.
//   - Job.IOPrio gives every read and write an I/O priority (sqe->ioprio,
//     or ioprio_set on the pool's threads); Job.Blocking issues them
//     blocking, never tried without blocking first, which a cgroup I/O
//     throttle needs to charge each byte once (ioprio.go, job.go).
//   - Job.Observer sees every chunk as read, every hole, and every barrier;
//     Job.SyncEvery adds barriers while the copy goes; Job.Grid keeps
//     chunks inside fixed-size pieces of the range (observe.go). Digests
//     for a read-back verification, block checksums and restart states
//     are built on these.
//   - Job.Check turns a run into a read pass that writes nothing: one
//     range, or SRC's and DST's side by side, handed chunk by chunk to a
//     function (check.go).
//
// A Backend moves bytes: Submit queues requests, Reap waits for
// completions. The io_uring backend lives here (NewUring); the pool in
// package fallback, which also serves the ends that move their own bytes
// (IOEnd). A further backend is one new package.
//
// # Ends
//
// The planner and the end of a run reach each end through an Endpoint
// (endpoint.go): where its data is (SEEK_DATA/SEEK_HOLE, or NBD block
// status), the fdatasync before holes are trusted, preallocation, the
// final size, and the switch for an unaligned last write. A file or block
// device is a FileEnd of Job.Files; Job.Ends holds the ends that are not
// descriptors: IOEnds (ioend.go), which read, write, zero and flush
// through methods of their own (an NBD export, package nbdend), and which
// only a backend with the AnyEnd capability serves. An IOEnd may say that
// it can only be read in order (a stream): the backend then serves it in
// offset order.
package engine
