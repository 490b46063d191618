// Package align measures both ends of a copy and turns what it finds into
// the numbers the engine runs with.
//
// It answers three questions, in this order:
//
//  1. What does each end allow? [Probe] reads the geometry of an open file
//     or block device: size, logical and physical block size, the O_DIRECT
//     memory and offset alignment, and the queue hints (optimal and maximum
//     I/O size, rotational). Every figure records where it came from in
//     [Geometry.Notes], so `ringcp -v` can say why a number is what it is.
//  2. How big and how many? [Choose] picks a block size that is a multiple
//     of every alignment and optimal I/O size of both ends, and a queue
//     depth that bounds the memory in flight. Each decision is explained
//     in [Choice.Why].
//  3. Where do the bytes live? [AllocBuffers] maps one anonymous,
//     page-aligned region outside the Go heap and cuts it into slots, so
//     the garbage collector never moves or scans them and io_uring can
//     register them as fixed buffers.
//
// Contract:
//
//   - Probe never fails because a hint is missing: anything it cannot
//     learn is 0 (unknown) or a documented safe default (4096 for
//     alignments), with a note saying so. It fails only when the file
//     cannot be stat'ed at all.
//   - Probe does not change the file: no seek, no I/O, no flag changes
//     (it uses the descriptor through SyscallConn, not Fd, so a
//     non-blocking descriptor stays non-blocking).
//   - Choose is a pure function of its arguments: same input, same
//     Choice. It never fails; a block size given by the caller is kept as
//     is (validating it is the caller's job, see [IsAligned]).
//   - Buffers stay mapped until Free. The caller must make sure no I/O
//     (in particular no in-flight io_uring request) still uses a slot
//     before calling Free; afterwards touching a slot faults.
//
// Probe and AllocBuffers are Linux-only; on other systems they return
// errors.ErrUnsupported. The rounding helpers and Choose work everywhere.
package align
