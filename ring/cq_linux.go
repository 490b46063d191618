package ring

import (
	"sync/atomic"
	"unsafe"
)

// completionQueue is our view of the CQ ring. The kernel produces CQEs and
// advances tail; we consume them and advance head.
type completionQueue struct {
	khead   *uint32 // written by us
	ktail   *uint32 // written by the kernel
	cqes    unsafe.Pointer
	mask    uint32
	entries uint32
	head    uint32 // our copy of *khead; only we write it
	// backlog holds CQEs moved out of the ring to make room when the kernel
	// answered EBUSY/EAGAIN (see relieve). They are handed out first.
	backlog []CQE
}

func (cq *completionQueue) init(ring unsafe.Pointer, off *cqRingOffsets) {
	cq.khead = (*uint32)(unsafe.Add(ring, off.Head))
	cq.ktail = (*uint32)(unsafe.Add(ring, off.Tail))
	cq.mask = *(*uint32)(unsafe.Add(ring, off.RingMask))
	cq.entries = *(*uint32)(unsafe.Add(ring, off.RingEntries))
	cq.cqes = unsafe.Add(ring, off.CQEs)
	cq.head = atomic.LoadUint32(cq.khead)
}

// inRing is the number of CQEs in the shared ring.
func (cq *completionQueue) inRing() uint32 {
	// Acquire: pairs with the kernel's smp_store_release of tail in
	// io_commit_cqring; every CQE before tail is fully written.
	return atomic.LoadUint32(cq.ktail) - cq.head
}

// ready is the number of CQEs that can be peeked now.
func (cq *completionQueue) ready() uint32 {
	return uint32(len(cq.backlog)) + cq.inRing()
}

func (cq *completionQueue) at(i uint32) CQE {
	return *(*CQE)(unsafe.Add(cq.cqes, uintptr(i&cq.mask)*cqeSize))
}

// copyOut copies up to len(dst) ready CQEs, backlog first, without
// consuming them.
func (cq *completionQueue) copyOut(dst []CQE) int {
	n := copy(dst, cq.backlog)
	avail := cq.inRing()
	for i := uint32(0); n < len(dst) && i < avail; i++ {
		dst[n] = cq.at(cq.head + i)
		n++
	}
	return n
}

// advance consumes n CQEs, backlog first.
func (cq *completionQueue) advance(n uint32) {
	fromBacklog := min(n, uint32(len(cq.backlog)))
	cq.backlog = cq.backlog[fromBacklog:]
	if len(cq.backlog) == 0 {
		cq.backlog = cq.backlog[:0:0]
	}
	if rest := n - fromBacklog; rest > 0 {
		cq.head += rest
		// Release: pairs with the kernel's read of head when it looks for
		// free CQ slots; our copies of those CQEs are complete before the
		// kernel may overwrite them.
		atomic.StoreUint32(cq.khead, cq.head)
	}
}

// stash moves every CQE in the ring to the backlog and frees the ring.
func (cq *completionQueue) stash() uint32 {
	n := cq.inRing()
	for i := uint32(0); i < n; i++ {
		cq.backlog = append(cq.backlog, cq.at(cq.head+i))
	}
	if n > 0 {
		cq.head += n
		atomic.StoreUint32(cq.khead, cq.head) // Release: as in advance.
	}
	return n
}

// cqNeedsFlush says the kernel holds completions that reach the ring only
// through io_uring_enter(GETEVENTS): overflowed CQEs, or deferred task work.
func (r *Ring) cqNeedsFlush() bool {
	if r.flags&FlagDeferTaskrun != 0 && r.flags&FlagTaskrunFlag == 0 {
		return true // without TASKRUN_FLAG the kernel gives no hint
	}
	return r.sq.flagsNow()&(sqCQOverflow|sqTaskrun) != 0
}

// PeekBatch copies up to len(dst) ready completions into dst without
// consuming them; CQAdvance consumes them. When none are ready but the
// kernel holds some back (CQ overflow, deferred task work), it flushes them
// with one non-blocking io_uring_enter.
func (r *Ring) PeekBatch(dst []CQE) (int, error) {
	if r.closed {
		return 0, errClosed
	}
	if r.cq.ready() == 0 && r.cqNeedsFlush() {
		if _, err := r.enter(0, 0, enterGetEvents, nil); err != nil {
			return 0, err
		}
	}
	return r.cq.copyOut(dst), nil
}

// PeekCQE returns the oldest ready completion without consuming it.
func (r *Ring) PeekCQE() (CQE, bool, error) {
	var one [1]CQE
	n, err := r.PeekBatch(one[:])
	return one[0], n == 1, err
}

// CQAdvance marks n peeked completions as seen, returning their CQ slots to
// the kernel.
func (r *Ring) CQAdvance(n int) {
	r.cq.advance(uint32(n))
	r.stats.reaped += uint64(n)
}

// CQESeen marks one peeked completion as seen.
func (r *Ring) CQESeen() { r.CQAdvance(1) }

// WaitCQEs submits anything prepared and blocks until at least n
// completions are ready.
func (r *Ring) WaitCQEs(n uint32) error {
	_, err := r.SubmitAndWait(n)
	return err
}

// ForEachCQE calls fn for every ready completion, in order, then marks them
// all seen. It returns how many it handled.
func (r *Ring) ForEachCQE(fn func(CQE)) (int, error) {
	var batch [64]CQE
	total := 0
	for {
		n, err := r.PeekBatch(batch[:])
		if err != nil || n == 0 {
			return total, err
		}
		for _, c := range batch[:n] {
			fn(c)
		}
		r.CQAdvance(n)
		total += n
	}
}

// RunDeferred runs the completion work the kernel has queued for this
// ring's thread without waiting for a completion. Besides posting CQEs,
// that work frees requests: an io-wq worker that finished a request after
// its CQE was reaped leaves the last reference to it (and so to its file)
// as such work, and only an io_uring_enter from the issuer (DEFER_TASKRUN)
// or the ring's teardown in a kernel worker runs it.
func (r *Ring) RunDeferred() error {
	if r.closed {
		return errClosed
	}
	_, err := r.enter(0, 0, enterGetEvents, nil)
	return err
}
