package ring

import (
	"time"
	"unsafe"
)

// pollPause is how long a bounded wait sleeps between looks at the CQ on
// a kernel without IORING_ENTER_EXT_ARG (before 5.11), which cannot pass a
// timeout to io_uring_enter.
const pollPause = time.Millisecond

// kernelTimespec is struct __kernel_timespec: 64-bit fields on every
// architecture, unlike unix.Timespec.
type kernelTimespec struct {
	Sec, Nsec int64
}

// waitArg is the memory a bounded io_uring_enter points the kernel at. It
// lives in the Ring, on the heap, so its address is stable and kept alive
// for the call (getEventsArg.Ts holds it as a plain integer).
type waitArg struct {
	arg getEventsArg
	ts  kernelTimespec
}

// SubmitAndWaitTimeout is SubmitAndWait with a bound: it returns once want
// completions are ready or timeout has passed, whichever comes first; a
// wait that timed out is not an error (look at the CQ). The kernel bounds
// the wait itself with IORING_ENTER_EXT_ARG (5.11); older kernels poll the
// CQ every pollPause instead.
func (r *Ring) SubmitAndWaitTimeout(want uint32, timeout time.Duration) (int, error) {
	return r.submitAndWait(want, time.Now().Add(max(timeout, 1)))
}

// bound gives the min_complete and the argument for the next wait before
// deadline: nothing to wait for once it has passed, and on a kernel that
// cannot take a timeout, a look without waiting.
func (r *Ring) bound(want uint32, deadline time.Time) (uint32, *getEventsArg) {
	left := time.Until(deadline)
	if left <= 0 || r.features&FeatExtArg == 0 {
		return 0, nil
	}
	w := &r.wait
	w.ts = kernelTimespec{Sec: int64(left / time.Second), Nsec: int64(left % time.Second)}
	w.arg = getEventsArg{Ts: uint64(uintptr(unsafe.Pointer(&w.ts)))}
	return want, &w.arg
}

// timedOut says a bounded wait should return: enough is ready, or the
// deadline passed. Without a kernel timeout (arg nil) it pauses before the
// next look.
func (r *Ring) timedOut(want uint32, deadline time.Time, arg *getEventsArg) bool {
	if r.cq.ready() >= want || !time.Now().Before(deadline) {
		return true
	}
	if arg == nil {
		time.Sleep(min(pollPause, time.Until(deadline)))
	}
	return false
}
