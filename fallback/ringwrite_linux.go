package fallback

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/ring"
	"golang.org/x/sys/unix"
)

// Writes that allocate. ext4 takes the inode's lock exclusively for an
// O_DIRECT write that allocates blocks (a write into a hole: every write
// of a new sparse file whose zero runs are left as holes), and a pwrite
// holds it until the device completes the write: the pool's workers then
// write one at a time, each waiting for the disk. Measured on Linux 6.18,
// ext4 on vda, fio: 8 threads of sync 48 KiB O_DIRECT writes with 16 KiB
// holes between them moved 98 MB/s into a sparse file, 368 MB/s into a
// preallocated one; 64 KiB writes, 586 MB/s with 8 pwrite threads, 1535
// MB/s through io_uring at depth 8; 8 threads each with one write in
// flight, 232 MB/s with pwrite and 640 MB/s through io_uring. A zstd
// qcow2 import (the pool serves the image) wrote its 661 MiB in 9121
// such writes and took 2.99 s, 1.70 s to /dev/null (one pair of runs);
// through rings, 2.81-2.98 s against 3.12-3.22 s with pwrite (3 runs
// each, interleaved, load 2.3). An async write (io_uring's, queued
// to its workers when it cannot go without blocking) holds the lock only
// while it allocates and submits, not until the device is done: so on
// ext4 a worker writes a regular file opened O_DIRECT through a small
// ring of its own and waits for that one completion, as pwrite would,
// and the writes of all workers reach the disk together.
//
// Only there: io_uring retries a short write itself at the file position
// (engine.NeedsHonestShortIO), which ext4 reports honestly. And only in a
// pool that serves an end moving its own bytes (an image, a web or NBD
// end: the pool is there because the end needs it): a pool of
// descriptors alone is the fallback copier takes where io_uring is not
// there or not trusted, or that --engine pool asks for, and there it is
// pread and pwrite, what the fallback's tests exercise. Not with an I/O priority nor with Setup.Blocking, whose
// throttling wants each write issued by the worker itself (io_uring's
// own workers would issue it). When a ring cannot be had (io_uring off,
// locked memory short), or the pids cgroup leaves no room for io-wq's
// threads (threads_linux.go), the pool writes with pwrite, as before.

// ringWrites hands the workers' writes to rings, one per worker at most.
type ringWrites struct {
	files [engine.NumFiles]bool // the descriptors written through a ring
	free  chan *ring.Ring
	off   atomic.Bool // a ring could not be had: pwrite from now on
	wrote atomic.Bool // a write completed through a ring (for Caps)
	mu    sync.Mutex
	all   []*ring.Ring
}

// newRingWrites picks the descriptors of s written through rings; nil
// when there are none. servesEnds: the pool serves IOEnds too.
func newRingWrites(s engine.Setup, servesEnds bool) *ringWrites {
	if !servesEnds || s.IOPrio != 0 || s.Blocking || !threadsToSpare(s.Depth) {
		return nil
	}
	w := &ringWrites{free: make(chan *ring.Ring, s.Depth)}
	some := false
	for id, fd := range s.Files.Fds() {
		if fd >= 0 && s.Files[id] != nil && directOnExt4(fd) {
			w.files[id], some = true, true
		}
	}
	if !some {
		return nil
	}
	return w
}

// directOnExt4 says fd is a regular file on ext4 opened with O_DIRECT.
func directOnExt4(fd int) bool {
	var st unix.Stat_t
	var fs unix.Statfs_t
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_DIRECT != 0 &&
		unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG &&
		unix.Fstatfs(fd, &fs) == nil && fs.Type == unix.EXT4_SUPER_MAGIC
}

// write writes q through a ring when q's file is one of them, and says
// whether it did; c is then q's completion, as Do would give it.
func (w *ringWrites) write(fd int, q engine.Request) (c engine.Completion, handled bool) {
	if w == nil || q.Op != engine.OpWrite || !w.files[q.File] || len(q.Buf) == 0 {
		return c, false
	}
	r := w.get()
	if r == nil {
		return c, false
	}
	// The wait runs the completion's task work on the thread that
	// submitted: keep the goroutine there. q.Buf is a slot's buffer
	// (outside the Go heap) or heap memory, which does not move; either
	// way the kernel is done with it when the completion is reaped here.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sqe := r.GetSQE()
	sqe.PrepWrite(int32(fd), q.Buf, uint64(q.Off))
	n, err := r.SubmitAndWait(1)
	if err != nil && n == 0 {
		// Not submitted (io_uring_enter fails only when it took no
		// SQE): nothing moved, pwrite does it, and this pool's rings
		// are done.
		w.off.Store(true)
		return c, false
	}
	if err != nil {
		// Submitted, but the wait failed: the buffer is the kernel's
		// until the completion comes.
		err = r.WaitCQEs(1)
	}
	if err != nil {
		return w.lost(q), true
	}
	cqe, ok, err := r.PeekCQE()
	if err != nil || !ok {
		return w.lost(q), true
	}
	r.CQESeen()
	w.free <- r
	if cqe.Res == -int32(syscall.ECANCELED) {
		// io-wq could not start a worker for the write (a pids cgroup
		// or RLIMIT_NPROC full: copy_process says EAGAIN, and io-wq
		// cancels what it cannot run), so the kernel cancelled it
		// before it ran: nothing moved. pwrite needs no thread of the
		// kernel's: it does this one, and every later one.
		w.off.Store(true)
		return c, false
	}
	w.wrote.Store(true)
	if cqe.Res < 0 {
		return engine.Completion{Slot: q.Slot, Errno: syscall.Errno(-cqe.Res)}, true
	}
	return engine.Completion{Slot: q.Slot, N: int(cqe.Res)}, true
}

// get takes a free ring or sets one up; nil when none can be had.
func (w *ringWrites) get() *ring.Ring {
	if w.off.Load() {
		return nil
	}
	select {
	case r := <-w.free:
		return r
	default:
	}
	r, err := ring.Setup(2, nil)
	if err != nil {
		w.off.Store(true)
		return nil
	}
	w.mu.Lock()
	w.all = append(w.all, r)
	w.mu.Unlock()
	return r
}

// lost fails q when its ring lost track of it (ErrCQLost, or a wait
// that fails): the ring is never used again, and the copy fails, so the
// buffer the kernel may still read is not filled for another request.
func (w *ringWrites) lost(q engine.Request) engine.Completion {
	w.off.Store(true)
	return engine.Completion{Slot: q.Slot, Errno: syscall.EIO}
}

// close closes the rings; the workers have stopped.
func (w *ringWrites) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.all {
		r.Close()
	}
	w.all = nil
}

// used says whether any write went through a ring, for Caps: one that
// was set up but then failed to submit, or whose write io-wq cancelled,
// wrote nothing.
func (w *ringWrites) used() bool {
	return w != nil && w.wrote.Load()
}
