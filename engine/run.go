package engine

import (
	"context"
	"errors"
	"syscall"
	"time"
)

// Run copies job with a backend built by newBackend: Open, then
// Copy.Run, then Copy.Close. See the package doc for the contract. Stats
// are valid even when err is not nil.
func Run(ctx context.Context, job Job, newBackend NewBackend) (Stats, error) {
	c, err := Open(job, newBackend)
	if err != nil {
		return Stats{}, err
	}
	st, err := c.Run(ctx)
	if cerr := c.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return st, err
}

// flushBeforeMapping guards against the class of bug where SEEK_DATA
// misses data still in the page cache (OpenZFS #11900, where sparse copies
// of freshly written files came out as zeros; Lustre LU-16948): SRC is
// fdatasync'ed once before its holes are trusted. fsync works on a
// read-only descriptor. It costs nothing when nothing is dirty, and an
// O_DIRECT read would flush the same pages anyway. Where it fails, holes
// are not trusted at all and every byte is read.
// The copy's phase is PhaseMap meanwhile, then PhaseCopy.
func flushBeforeMapping(job *Job) {
	if job.MapHoles {
		job.setPhase(PhaseMap)
		if err := job.end(FileSrc).Settle(); err != nil {
			job.MapHoles = false
		}
	}
	job.setPhase(PhaseCopy)
}

// run is the state of one copy.
type run struct {
	job      *Job
	be       Backend
	slots    []slot  // indexed like the budget's buffers; this copy's are those it holds
	member   *member // this copy's hold on the budget
	planner  planner
	pending  []Request
	inflight int
	tail     int   // slot in phaseTailReady, or -1
	failed   error // first I/O error; stops everything
	syncErr  error // the barrier failed: nothing written can be vouched for
	canceled error // ctx.Err() once seen; stops new reads only
	stopAt   time.Time
	ctx      context.Context // nil when nothing can stop the run
	// broken: the backend failed; nothing more is sent to it.
	broken bool
	// delayed are retries waiting for their backoff (retry.go).
	delayed []delayedReq
	// pace is the line of requests waiting for the rate caps (pace.go).
	pace pacer
	// window is the budget's window, most the most one request moves
	// now, and changes the budget's channel that closes at its next
	// change: all three as they were at the start of this turn of pump.
	window    Window
	most      int
	changes   <-chan struct{}
	meter     meter         // what the requests took, for the budget's controller
	syncRetry [3]retryState // of SyncSlot, SyncTailSlot and SyncPeriodicSlot
	periodic  periodic      // barriers while the copy goes (observe.go)
	policy    retryPolicy
	stats     Stats
	cqes      []Completion
	prefix    prefix
	zero      zeroer
	// tailWritten: the unaligned tail went through a separate FileDstTail,
	// which the barrier syncs too. syncsLeft counts barrier syncs in
	// flight; syncLost says one was given up.
	tailWritten bool
	syncsLeft   int
	syncLost    bool
}

func newRun(job *Job, be Backend) *run {
	bufs := job.Budget.Buffers()
	depth := len(bufs)
	r := &run{job: job, be: be, tail: -1, policy: defaultRetry, member: job.Budget.join(),
		slots: make([]slot, depth), pending: make([]Request, 0, depth+2), cqes: make([]Completion, depth+2)}
	for i := range bufs {
		r.slots[i].buf = bufs[i][:job.BlockSize]
	}
	r.planner = newPlanner(job)
	r.pace = newPacer(job)
	r.zero = newZeroer(job)
	r.stats.Backend, r.stats.Caps = be.Name(), be.Caps()
	return r
}

// stopping: no new chunks are started.
func (r *run) stopping() bool { return r.failed != nil || r.canceled != nil }

func (r *run) copy(ctx context.Context) error {
	r.ctx = ctx
	if err := r.pump(true); err != nil {
		return err
	}
	return r.finish()
}

// pump runs the copy (with work, starting chunks and the tail) until
// nothing is in flight, delayed or in line. It returns an error only when
// the backend failed and could not be drained; every other error is
// r.failed. It never sleeps: every wait also ends on a stop and on a
// change of the budget (a cap changed, a slot given back).
func (r *run) pump(work bool) error {
	for {
		r.look()
		r.admit()
		starved := false
		if work {
			starved = r.plan()
			r.startTail()
		}
		r.due()
		if work {
			r.maybeSync()
		}
		if err := r.submit(); err != nil {
			return r.abort(err)
		}
		waiting := len(r.delayed) > 0 || len(r.pace.line) > 0
		if r.inflight == 0 && !waiting {
			if !starved {
				return nil
			}
			// Work left, nothing of ours in flight, and the budget's
			// slots all with other copies: wait for one to come back.
			r.member.wait(r.context())
			continue
		}
		if r.inflight == 0 {
			// Only retries or the line waiting: nothing can complete
			// meanwhile.
			r.idle(r.nextWake())
			continue
		}
		if err := r.reapOnce(r.nextWake()); err != nil {
			return r.abort(err)
		}
	}
}

// look starts a turn of pump: a stop, the budget's window and the
// request size it allows, and the channel that says the budget changed
// after this.
func (r *run) look() {
	r.window, r.changes = r.member.look()
	r.checkStop()
	r.most = r.requestMost()
}

// leave ends the run's hold on the budget, unless requests may still be in
// flight (ErrUndrained): their slots stay taken for good.
func (r *run) leave(err error) error {
	// Caps again at the end: Stats say how the copy ran, and a backend
	// may only know that once it wrote (the pool's rings, which it sets
	// up at the first write that can use one).
	r.stats.Caps = r.be.Caps()
	if errors.Is(err, ErrUndrained) {
		return err
	}
	return errors.Join(err, r.member.leave())
}

// context is what can stop the run; never nil.
func (r *run) context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// checkStop notes a cancelled context once.
func (r *run) checkStop() {
	if r.canceled != nil || r.ctx == nil {
		return
	}
	if err := r.ctx.Err(); err != nil {
		r.canceled = err
		r.noteStop()
	}
}

// noteStop remembers when the copy began stopping: retries of writes get
// a grace from then on.
func (r *run) noteStop() {
	if r.stopAt.IsZero() {
		r.stopAt = time.Now()
	}
}

// reapOnce waits for at least one completion (or for timeout, when
// positive) and handles what came.
func (r *run) reapOnce(timeout time.Duration) error {
	n, err := r.be.Reap(r.cqes, 1, timeout)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, c := range r.cqes[:n] {
		r.inflight--
		r.measure(c, now)
		r.complete(c)
	}
	if now.Sub(r.meter.last) >= r.member.b.reportEvery() {
		r.member.report(&r.meter, now)
	}
	return nil
}

// plan gives the next chunks of the range to the slots the budget hands
// out. It reports whether it stopped for want of a slot.
func (r *run) plan() (starved bool) {
	// While a request waits in line for the rate caps no chunk is
	// planned: it would only wait behind it, planned at today's size.
	for len(r.pace.line) == 0 && !r.planned() {
		idx, ok := r.member.take()
		if !ok {
			return true
		}
		c, err := r.planner.next(r.most)
		if err != nil {
			r.member.give(idx)
			r.fail(err)
			return false
		}
		s := &r.slots[idx]
		s.rel, s.n, s.hole = c.rel, c.n, c.hole
		s.seg, s.segEnd, s.done, s.paid, s.busy = 0, 0, 0, 0, 0
		if o := r.job.Observer; o != nil && c.hole {
			o.Hole(c.rel, int64(c.n))
		}
		if c.hole && r.job.Check != nil {
			r.chunkDone(idx) // a read pass has nothing to do for a hole
			continue
		}
		if c.hole {
			s.segEnd, s.segZero = c.n, true
			r.startSegment(idx)
			continue
		}
		s.phase = phaseRead
		r.send(idx)
	}
	return false
}

// planned: no chunk is left to start (the range is planned, or the copy
// is stopping). The budget then stops counting this copy for fair shares.
func (r *run) planned() bool {
	r.skipGap()
	done := r.planner.done() || r.stopping()
	if done {
		r.member.want(false)
	}
	return done
}

// startTail writes the unaligned last chunk once nothing else is in flight
// or waiting for a retry or the rate caps, so the page cache never holds a
// page an O_DIRECT write is changing.
func (r *run) startTail() {
	if r.tail < 0 || r.inflight > 0 || len(r.pending) > 0 || len(r.delayed) > 0 || len(r.pace.line) > 0 {
		return
	}
	idx := r.tail
	r.tail = -1
	if r.stopping() {
		r.release(idx)
		return
	}
	s := &r.slots[idx]
	if err := r.job.bufferTail(); err != nil {
		r.fail(&OpError{Op: "fcntl(F_SETFL)", Path: r.job.end(FileDst).Name(), Offset: r.job.DstOff + s.rel, Err: err})
		r.release(idx)
		return
	}
	s.phase, s.done, s.paid = phaseTailWrite, 0, 0
	r.tailWritten = r.job.tailFile() == FileDstTail
	r.queue(idx)
}

func (r *run) queue(idx int) {
	if r.broken {
		r.release(idx) // nothing more is sent to a failed backend
		return
	}
	r.pending = append(r.pending, r.job.request(idx, &r.slots[idx], r.most))
}

// submit sends what is queued. The backend says how many it took: those
// are in flight even when it failed part-way, and the rest are abandoned
// (abort drains and stops the copy).
func (r *run) submit() error {
	if len(r.pending) == 0 {
		return nil
	}
	n, err := r.be.Submit(r.pending)
	r.inflight += n
	r.sent(r.pending[:n])
	if err != nil {
		for _, q := range r.pending[n:] {
			r.abandon(q.Slot)
		}
	}
	r.pending = r.pending[:0]
	return err
}

func (r *run) release(idx int) {
	r.slots[idx].phase = phaseFree
	r.member.give(idx)
}

// complete maps one completion to the slot's next step. Every case is
// explicit: retry, error, short (requeue the rest), done, end of file.
func (r *run) complete(c Completion) {
	if c.Slot < 0 {
		r.syncDone(c)
		return
	}
	s := &r.slots[c.Slot]
	again := c.Errno == syscall.EAGAIN || c.Errno == syscall.EINTR
	if !again {
		r.progressed(c.Slot)
	}
	switch {
	case again && r.stopping() && s.reading():
		r.release(c.Slot) // a read nobody will write any more
	case again:
		// The kernel had no room or was interrupted: send the same
		// request again after a backoff, within limits (retry.go).
		r.retry(c.Slot, c.Errno)
	case s.phase == phaseZeroOp:
		r.zeroOpDone(c.Slot, s, c.Errno)
	case c.Errno != 0:
		r.fail(r.opError(s, c.Errno))
		r.release(c.Slot)
	case s.reading():
		r.readDone(c.Slot, s, c.N)
	default:
		r.writeDone(c.Slot, s, c.N)
	}
}

func (r *run) readDone(idx int, s *slot, n int) {
	if r.stopping() {
		r.release(idx)
		return
	}
	a := r.job.SrcAlign
	if s.phase == phaseReadDst {
		a = r.job.DstAlign
	}
	if !advance(s, s.n, n, a) {
		// A short read that cannot move forward is end of file: the range
		// was checked against SRC's size, so SRC shrank under us (or, in
		// a read pass, the file is shorter than its range).
		cause := ErrSourceShrank
		if r.job.Check != nil || s.phase == phaseReadDst {
			cause = ErrEndedEarly
		}
		r.fail(r.opError(s, cause))
		r.release(idx)
		return
	}
	if s.done < s.n {
		r.send(idx) // the rest of a short read, or the next piece of a chunk moved in several
		return
	}
	if s.phase == phaseReadDst {
		if r.job.Check != nil {
			r.checkRead(idx, s)
		} else {
			r.syncRead(idx, s)
		}
		return
	}
	r.stats.BytesRead += int64(s.n)
	if p := r.job.Progress; p != nil {
		p.Read.Add(int64(s.n))
	}
	if o := r.job.Observer; o != nil {
		o.Data(s.rel, s.buf[:s.n])
	}
	if r.job.Check != nil {
		r.checkRead(idx, s)
		return
	}
	if r.job.syncing() {
		// DST's side of the chunk next; the caps count it, as a
		// compare's second read.
		s.phase, s.done, s.paid = phaseReadDst, 0, 0
		r.send(idx)
		return
	}
	r.nextSegment(idx)
}

func (r *run) writeDone(idx int, s *slot, n int) {
	a := r.job.DstAlign
	if s.phase == phaseTailWrite {
		a = 1
	}
	if !advance(s, s.segEnd-s.seg, n, a) {
		r.fail(r.opError(s, errShortWrite))
		r.release(idx)
		return
	}
	if s.done < s.segEnd-s.seg {
		if r.stopping() && s.hole {
			// A hole chunk written as zeros, a block at a time, stops
			// between blocks like reads do: it is not in the prefix, and
			// its end can be a gigabyte away (maxHoleChunk). Its zeros
			// are not torn data: what they replaced is not kept anyway.
			r.release(idx)
			return
		}
		// A short write with the rest still to go, or the next piece of
		// a span moved in several requests, is sent even when stopping:
		// what was handed to DST is finished, not torn. A hole written as
		// zeros goes on a buffer at a time, each paid for (send).
		r.send(idx)
		return
	}
	if s.phase == phaseZeroWrite {
		r.finished(countZeroed, s)
	} else {
		r.finished(countData, s)
	}
	r.segmentDone(idx)
}

// advance accounts n bytes moved by the slot's request over a span of
// length total. It reports false when the request moved nothing that can
// be built on: a short O_DIRECT transfer below one alignment unit cannot
// be resumed from where it ended.
func advance(s *slot, total, n, alignment int) bool {
	done := s.start + n
	if done >= total {
		s.done = total
		return true
	}
	done = alignDown(done, alignment)
	if done <= s.start {
		return false
	}
	s.done = done
	return true
}

func (r *run) fail(err error) {
	if r.failed == nil {
		r.failed = err
		r.noteStop()
		if f := r.job.OnFail; f != nil {
			f(err)
		}
	}
}

func (r *run) opError(s *slot, err error) error {
	cp := *s // request moves start; rebuild on a copy, only for op and offset
	q := r.job.request(0, &cp, r.most)
	return &OpError{Op: r.job.OpName(q), Path: r.job.end(q.File).Name(), Offset: q.Off, Err: err}
}
