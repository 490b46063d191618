package ring

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// submissionQueue is our view of the SQ ring. The kernel consumes entries
// and advances head; we produce entries and advance tail.
type submissionQueue struct {
	khead   *uint32 // written by the kernel
	ktail   *uint32 // written by us
	kflags  *uint32 // written by the kernel: NEED_WAKEUP, CQ_OVERFLOW, TASKRUN
	array   unsafe.Pointer
	sqes    unsafe.Pointer
	mask    uint32
	entries uint32
	// sqeTail is the next SQE to hand out; sqeHead the next one not yet
	// published to the kernel. Only this goroutine touches them.
	sqeHead, sqeTail uint32
}

func (sq *submissionQueue) init(ring, sqes unsafe.Pointer, off *sqRingOffsets) {
	sq.khead = (*uint32)(unsafe.Add(ring, off.Head))
	sq.ktail = (*uint32)(unsafe.Add(ring, off.Tail))
	sq.kflags = (*uint32)(unsafe.Add(ring, off.Flags))
	sq.mask = *(*uint32)(unsafe.Add(ring, off.RingMask))
	sq.entries = *(*uint32)(unsafe.Add(ring, off.RingEntries))
	sq.array = unsafe.Add(ring, off.Array)
	sq.sqes = sqes
	// The indirection array maps ring positions to SQE indexes. An identity
	// map, written once, lets positions and SQEs advance together (as
	// liburing does since 2.2).
	for i := uint32(0); i < sq.entries; i++ {
		*(*uint32)(unsafe.Add(sq.array, 4*uintptr(i))) = i
	}
	// Start from wherever the kernel is (0 on a new ring).
	sq.sqeHead = atomic.LoadUint32(sq.khead)
	sq.sqeTail = sq.sqeHead
}

func (sq *submissionQueue) sqe(i uint32) *SQE {
	return (*SQE)(unsafe.Add(sq.sqes, uintptr(i&sq.mask)*sqeSize))
}

// GetSQE returns a zeroed SQE to fill, or nil when the SQ is full (submit,
// then try again). The SQE is not seen by the kernel until Submit.
func (r *Ring) GetSQE() *SQE {
	if r.closed {
		return nil
	}
	sq := &r.sq
	// Acquire: pairs with the kernel's smp_store_release of head in
	// io_commit_sqring; entries before head have been read and may be reused.
	head := atomic.LoadUint32(sq.khead)
	if sq.sqeTail-head >= sq.entries {
		return nil
	}
	sqe := sq.sqe(sq.sqeTail)
	sq.sqeTail++
	*sqe = SQE{}
	return sqe
}

// flush publishes the SQEs handed out since the last flush and returns how
// many entries the kernel has yet to consume.
func (sq *submissionQueue) flush() uint32 {
	if sq.sqeHead != sq.sqeTail {
		sq.sqeHead = sq.sqeTail
		// Release: pairs with the kernel's smp_load_acquire of tail in
		// io_sqring_entries; the SQE contents written before this store are
		// visible to the kernel once it sees the new tail.
		atomic.StoreUint32(sq.ktail, sq.sqeTail)
	}
	// Acquire: pairs with the kernel's store of head, as in GetSQE.
	return sq.sqeTail - atomic.LoadUint32(sq.khead)
}

// flagsNow reads the kernel's SQ flags. Atomic: the kernel sets them with
// atomic_or from other contexts.
func (sq *submissionQueue) flagsNow() uint32 {
	return atomic.LoadUint32(sq.kflags)
}

// Submit hands every prepared SQE to the kernel and returns how many it
// took. It does not wait for completions.
func (r *Ring) Submit() (int, error) {
	return r.SubmitAndWait(0)
}

// SubmitAndWait submits the prepared SQEs and waits until at least want
// completions are ready to be peeked. It returns how many SQEs were
// submitted. Asking for more completions than can ever arrive is an error
// rather than a hang.
func (r *Ring) SubmitAndWait(want uint32) (int, error) {
	return r.submitAndWait(want, time.Time{})
}

// submitAndWait is SubmitAndWait that stops waiting at deadline when it is
// not zero (see wait_linux.go).
func (r *Ring) submitAndWait(want uint32, deadline time.Time) (int, error) {
	if r.closed {
		return 0, errClosed
	}
	submitted := 0
	for {
		toSubmit := r.sq.flush()
		if uint64(want) > r.InFlight()+uint64(toSubmit) {
			return submitted, errWouldHang(want, r.InFlight()+uint64(toSubmit))
		}
		ready := r.cq.ready()
		var flags uint32
		if ready < want || (ready == 0 && r.cqNeedsFlush()) {
			flags |= enterGetEvents
		}
		if toSubmit == 0 && flags == 0 {
			return submitted, nil
		}
		wait, arg := want, (*getEventsArg)(nil)
		if !deadline.IsZero() {
			if wait, arg = r.bound(want, deadline); arg != nil {
				flags |= enterExtArg
			}
		}
		n, err := r.enter(toSubmit, wait, flags, arg)
		submitted += n
		if err != nil {
			return submitted, err
		}
		// An interrupted wait returns the submitted count with no error:
		// loop to re-check the CQ rather than trust the wait.
		if want == 0 || (!deadline.IsZero() && r.timedOut(want, deadline, arg)) {
			return submitted, nil
		}
	}
}
