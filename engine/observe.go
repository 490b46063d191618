package engine

import "time"

// Observer sees a copy's data as it moves, on the engine's thread, for
// what is computed from the data itself: digests for a read-back
// verification, a checksum, a state to restart from. Its calls add to the
// copy's time, so they must be quick.
type Observer interface {
	// Data is one chunk of the range as read from SRC, before it is
	// written (zero runs in it included): rel is its offset from the
	// range start. data is valid only during the call. Chunks come in
	// any order, each once.
	Data(rel int64, data []byte)
	// Hole is a chunk of the range that SRC has no data for: zeros,
	// never read.
	Hole(rel, n int64)
	// Durable says the first n bytes of the range are on DST and flushed
	// by a completed fdatasync: a periodic barrier (Job.SyncEvery), or the
	// barrier at the end of a copy, complete or stopped.
	Durable(n int64)
}

// periodic is the state of the barriers a long copy runs while it goes
// (Job.SyncEvery), so that a restart loses at most that much work.
type periodic struct {
	inFlight bool
	covers   int64 // the prefix the barrier in flight makes durable
	last     time.Time
	durable  int64 // the prefix known durable
}

// maybeSync sends a periodic barrier when one is due: not while one is in
// flight, not before SyncEvery has passed, and only when the prefix grew.
// It covers the chunks completed before it is sent (fsync is not ordered
// after writes still in flight, so nothing later counts).
func (r *run) maybeSync() {
	every, p := r.job.SyncEvery, &r.periodic
	if every <= 0 || p.inFlight || r.stopping() || r.prefix.end <= p.durable {
		return
	}
	now := time.Now()
	if p.last.IsZero() {
		p.last = now // the first one is due SyncEvery after the start
		return
	}
	if now.Sub(p.last) < every {
		return
	}
	p.inFlight, p.covers, p.last = true, r.prefix.end, now
	r.pending = append(r.pending, syncRequest(SyncPeriodicSlot))
}

// periodicDone handles a periodic barrier's completion: a failure fails
// the copy, as a failed write would.
func (r *run) periodicDone(c Completion) {
	p := &r.periodic
	p.inFlight = false
	if c.Errno != 0 {
		r.fail(r.slotError(c.Slot, c.Errno))
		return
	}
	r.progressed(c.Slot)
	r.madeDurable(p.covers)
}

// madeDurable records a barrier's completion and tells the observer.
func (r *run) madeDurable(n int64) {
	if n < r.periodic.durable {
		return
	}
	r.periodic.durable = n
	if o := r.job.Observer; o != nil {
		o.Durable(n)
	}
}
