package engine

import (
	"syscall"
	"time"
)

// retryPolicy bounds how a request that comes back -EAGAIN or -EINTR is
// sent again. The engine runs on one thread, so a retry is never slept on:
// it waits in the delayed list while other completions are reaped, and
// Reap's timeout wakes the engine when it is due.
type retryPolicy struct {
	first, most time.Duration // backoff: first, doubling up to most
	tries       int           // give up after this many in a row...
	noProgress  time.Duration // ...or after this long without progress
	// grace is how long writes, zero ops and syncs keep being retried once
	// the copy is stopping; reads are not retried at all then.
	grace time.Duration
}

// defaultRetry: a kernel that answers EAGAIN is short of memory or of
// request slots, which passes within milliseconds; 100 tries (about ten
// seconds at most) or 30 s without progress means it will not.
var defaultRetry = retryPolicy{
	first: time.Millisecond, most: 100 * time.Millisecond,
	tries: 100, noProgress: 30 * time.Second, grace: 2 * time.Second,
}

// backoff is the pause before try n (1-based): first, doubling, capped.
func (p retryPolicy) backoff(n int) time.Duration {
	d := p.first
	for i := 1; i < n && d < p.most; i++ {
		d *= 2
	}
	return min(d, p.most)
}

// retryState counts the failures in a row of one slot's request.
type retryState struct {
	tries int
	since time.Time // first failure of the run
}

// delayedReq is a request waiting for its backoff to pass.
type delayedReq struct {
	slot int // a data slot, or a sync slot (SyncSlot...)
	due  time.Time
}

func (r *run) retryStateOf(slot int) *retryState {
	if slot < 0 {
		return &r.syncRetry[-slot-1]
	}
	return &r.slots[slot].retry
}

// retry handles -EAGAIN/-EINTR for a request: send it again after a
// backoff, or give it up (the copy is stopping past its grace, or the
// request failed too long), failing the copy with a *RetryError.
func (r *run) retry(slot int, errno syscall.Errno) {
	st := r.retryStateOf(slot)
	now := time.Now()
	if st.tries == 0 {
		st.since = now
	}
	st.tries++
	switch {
	case r.broken || (r.stopping() && now.Sub(r.stopAt) >= r.policy.grace):
		// Stopping: the chunk is abandoned and stays out of the prefix; an
		// abandoned sync leaves the copy not synced.
		r.abandon(slot)
	case st.tries > r.policy.tries || now.Sub(st.since) >= r.policy.noProgress:
		r.fail(r.slotError(slot, &RetryError{Errno: errno, Tries: st.tries, Elapsed: now.Sub(st.since)}))
		r.abandon(slot)
	default:
		r.delayed = append(r.delayed, delayedReq{slot: slot, due: now.Add(r.policy.backoff(st.tries))})
	}
}

// progressed resets the slot's failure count: its request got an answer
// other than "again".
func (r *run) progressed(slot int) { *r.retryStateOf(slot) = retryState{} }

// due queues the delayed requests whose time has come. Once stopping,
// delayed reads are dropped at once and the rest after the grace.
func (r *run) due() {
	now := time.Now()
	keep := r.delayed[:0]
	for _, d := range r.delayed {
		switch {
		case r.stopping() && (d.slot >= 0 && r.slots[d.slot].reading() || now.Sub(r.stopAt) >= r.policy.grace):
			r.abandon(d.slot)
		case !now.Before(d.due):
			r.requeue(d.slot)
		default:
			keep = append(keep, d)
		}
	}
	r.delayed = keep
}

// nextDue is how long until the first delayed request is due; 0 when none
// is delayed.
func (r *run) nextDue() time.Duration {
	if len(r.delayed) == 0 {
		return 0
	}
	first := r.delayed[0].due
	for _, d := range r.delayed[1:] {
		if d.due.Before(first) {
			first = d.due
		}
	}
	return max(time.Until(first), time.Microsecond)
}

// requeue sends a slot's request again as it was (what it moves was
// paid for already, unless the request size grew since).
func (r *run) requeue(slot int) {
	if slot < 0 {
		r.pending = append(r.pending, syncRequest(slot))
		return
	}
	r.send(slot)
}

// abandon gives up a slot's request without finishing it.
func (r *run) abandon(slot int) {
	if slot == SyncPeriodicSlot {
		r.periodic.inFlight = false // the final barrier still comes
		return
	}
	if slot < 0 {
		r.syncsLeft--
		r.syncLost = true
		return
	}
	r.release(slot)
}

// slotError names the request of a slot for an error.
func (r *run) slotError(slot int, err error) error {
	if slot < 0 {
		q := syncRequest(slot)
		return &OpError{Op: r.job.OpName(q), Path: r.job.end(q.File).Name(), Offset: r.job.DstOff, Err: err}
	}
	return r.opError(&r.slots[slot], err)
}
