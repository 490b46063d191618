package engine

import "time"

// Draining after the backend failed: Submit or Reap returned an error.
// Requests the backend took may still be running in the kernel, reading
// into the copy's buffers and writing DST, so Run must not return (and the
// caller must not free the buffers or close the files) until they are
// reaped. A backend that keeps failing cannot be drained: Run then returns
// an *UndrainedError and the copy's resources are leaked, never freed.
const (
	drainAttempts = 3                     // failed Reaps in a row before giving up
	drainPause    = 10 * time.Millisecond // between them: a passing shortage may clear
)

// abort records the backend's error, stops submitting, and drains.
func (r *run) abort(err error) error {
	r.fail(err)
	r.broken = true
	r.dropQueued()
	failures := 1
	for r.inflight > 0 {
		if r.reapOnce(0) == nil {
			failures = 0
			r.dropQueued()
			continue
		}
		if failures++; failures >= drainAttempts {
			r.stats.InFlight = r.inflight
			return &UndrainedError{InFlight: r.inflight, Err: r.failed}
		}
		time.Sleep(drainPause)
	}
	return nil
}

// dropQueued abandons what was queued or delayed but not sent: with a
// failed backend nothing more is sent.
func (r *run) dropQueued() {
	for _, q := range r.pending {
		r.abandon(q.Slot)
	}
	r.pending = r.pending[:0]
	for _, d := range r.delayed {
		r.abandon(d.slot)
	}
	r.delayed = r.delayed[:0]
	r.admit() // r.failed is set: the line goes too
}
