package engine

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"
)

// The rate caps (Job.Rate, Job.SharedRate) count the bytes of the range
// as they are moved: a read when it is sent (what a copy reads is written
// once; each read of a read pass counts), and a hole's zeros when they
// are written as data. Holes never read, and zeros made by fallocate,
// cost nothing.
//
// A request that moves bytes not yet paid for waits in line. Only the
// first in line holds reservations on the limiters, for exactly its own
// request; when they come due it is sent and the next one reserves. So
// nothing is paid for long ahead, and what is paid for is never more
// than the request that goes: a cap lowered, or requests cut smaller
// (the budget's window), while a request waits gives its reservations
// back and takes new ones at the new terms, and a cap lifted lets it go
// at once. Copies sharing a limiter each hold at most one reservation on
// it, and take turns in the limiter's own order. While a chunk waits in
// line no other chunk is planned: a planned chunk is then always the
// last one, and one cut smaller gives its end back to the planner.
//
// Nothing sleeps on the line. The engine waits for the first request's
// time, a completion, a change of its budget (whoever changes a cap calls
// Budget.Wake) or a stop, whichever comes first; it also looks again at
// least every pacePoll, for a limiter a caller changed without a word. A
// stop drops the line at once: nothing in it was sent.

// pacePoll is the longest the engine waits on the line without looking
// at the limiters again.
const pacePoll = 200 * time.Millisecond

// pacer is a run's line for the rate caps.
type pacer struct {
	lims  [2]*rate.Limiter // Job.Rate and Job.SharedRate; nil where none
	line  []int            // slots whose next request waits, first in line first
	held  [2]*rate.Reservation
	limit [2]rate.Limit // each limiter's limit when held was taken
	heldN int           // the bytes held pays for
	due   time.Time     // when the first in line may go
	wait  time.Duration // how long held made it wait, from when it was taken
}

func newPacer(job *Job) pacer { return pacer{lims: [2]*rate.Limiter{job.Rate, job.SharedRate}} }

func (p *pacer) holds() bool { return p.heldN > 0 }

// stale: a limiter's limit changed since the reservations were taken.
func (p *pacer) stale() bool {
	for i, lim := range p.lims {
		if lim != nil && p.held[i] != nil && lim.Limit() != p.limit[i] {
			return true
		}
	}
	return false
}

// reserve takes n bytes from every limiter for the first in line.
func (p *pacer) reserve(now time.Time, n int) error {
	var wait time.Duration
	for i, lim := range p.lims {
		if lim == nil {
			continue
		}
		p.limit[i] = lim.Limit() // before ReserveN: a change in between is seen as stale
		res := lim.ReserveN(now, n)
		if !res.OK() {
			p.giveBack(now)
			return fmt.Errorf("engine: a request of %d bytes is over the rate cap's burst of %d: the burst must hold one alignment unit", n, lim.Burst())
		}
		p.held[i] = res
		wait = max(wait, res.DelayFrom(now))
	}
	p.heldN, p.due, p.wait = n, now.Add(wait), wait
	return nil
}

// giveBack cancels the reservations of the first in line: it has not
// gone, and will take new ones if it still must.
func (p *pacer) giveBack(now time.Time) {
	for i, res := range p.held {
		if res != nil {
			res.CancelAt(now)
		}
		p.held[i] = nil
	}
	p.heldN = 0
}

// spent: the first in line went; its reservations are used.
func (p *pacer) spent() {
	p.held = [2]*rate.Reservation{}
	p.heldN = 0
	p.line = p.line[1:]
}

// burstMost is the most one request may move under the limiters' bursts
// (a reservation over a burst can never be granted); 0 for no bound.
func (p *pacer) burstMost() int {
	most := 0
	for _, lim := range p.lims {
		if lim == nil || lim.Limit() == rate.Inf {
			continue
		}
		if b := lim.Burst(); most == 0 || b < most {
			most = b
		}
	}
	return most
}

// send queues the slot's next request, through the line when it moves
// bytes of the range that are not paid for yet.
func (r *run) send(idx int) {
	if r.unpaid(idx) == 0 {
		r.queue(idx)
		return
	}
	r.pace.line = append(r.pace.line, idx)
	r.admit()
}

// unpaid is how many bytes of the range the slot's next request moves
// that no reservation paid for: 0 for requests the caps do not count.
func (r *run) unpaid(idx int) int {
	s := &r.slots[idx]
	span := s.n // a read's span is the chunk
	switch {
	case s.reading():
	case s.phase == phaseZeroWrite && s.hole:
		span = s.segEnd - s.seg
	default:
		return 0
	}
	cp := *s // request moves start
	q := r.job.request(idx, &cp, r.most)
	end := min(cp.start+len(q.Buf), span) // an O_DIRECT read past the chunk moves nothing of the range
	return max(0, end-s.paid)
}

// admit sends the requests in line whose time has come, the first of the
// others holding its reservations. Stopping, it drops the line.
func (r *run) admit() {
	p := &r.pace
	now := time.Now()
	for len(p.line) > 0 {
		if r.stopping() {
			r.dropLine(now)
			return
		}
		idx := p.line[0]
		if p.holds() && (p.stale() || r.unpaid(idx) != p.heldN) {
			// A cap changed, or the request was cut smaller (or may now be
			// larger), since the reservations were taken.
			p.giveBack(now)
		}
		if !p.holds() {
			// A limiter's burst may have shrunk since this turn's look
			// (the yield controller sets a cap from its own goroutine): a
			// request sized before it could never be granted.
			r.most = r.requestMost()
			r.fitFirst(idx)
		}
		n := r.unpaid(idx)
		if n > 0 && !p.holds() {
			if err := p.reserve(now, n); err != nil {
				p.line = p.line[1:]
				r.fail(err)
				r.release(idx)
				continue
			}
		}
		if n > 0 && p.due.After(now) {
			return
		}
		r.slots[idx].paid += n
		if n > 0 {
			r.meter.paced += p.wait // the caps held it back that long (Sample.Paced)
		}
		p.spent()
		r.queue(idx)
	}
}

// dropLine gives the line up: nothing in it was sent (a read, or a
// hole's next zeros), and none of it will be.
func (r *run) dropLine(now time.Time) {
	r.pace.giveBack(now)
	for _, idx := range r.pace.line {
		r.release(idx)
	}
	r.pace.line = r.pace.line[:0]
}

// fitFirst cuts the first in line to the request size now, when it is a
// chunk planned under a larger one and not started: its end goes back to
// the planner, which planned nothing after it. A chunk on a grid (whole
// verification cells) stays whole, and moves in several requests.
func (r *run) fitFirst(idx int) {
	s := &r.slots[idx]
	most := r.job.chunkCap(r.most)
	if s.phase != phaseRead || s.done > 0 || s.paid > 0 || r.job.Grid > 0 || s.n <= most {
		return
	}
	if r.planner.giveBack(s.rel+int64(most), s.rel+int64(s.n)) {
		s.n = most
	}
}

// requestMost is the most one request moves now: a block (half of one in
// a compare), less where the job (Job.MaxRequest), the budget's window or
// a limiter's burst says so, rounded down to the alignment, at least one
// unit of it.
func (r *run) requestMost() int {
	most := r.job.chunkMax()
	for _, m := range []int{r.job.MaxRequest, r.window.Request, r.pace.burstMost()} {
		if m > 0 {
			most = min(most, m)
		}
	}
	unit := r.job.unit()
	return max(unit, alignDown(most, unit))
}

// nextWake is how long the engine may wait before something of its own
// is due: a retry's backoff, the first in line's reservation, and
// pacePoll while anything is in line. 0: nothing is.
func (r *run) nextWake() time.Duration {
	d := r.nextDue()
	if len(r.pace.line) > 0 {
		line := pacePoll
		if r.pace.holds() {
			line = min(line, max(time.Until(r.pace.due), time.Microsecond))
		}
		if d == 0 || line < d {
			d = line
		}
	}
	return d
}

// idle waits, with nothing in flight, until d has passed, the budget
// changed (a cap changed, a slot given back) or the copy is stopped.
func (r *run) idle(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.changes:
	case <-r.context().Done():
	}
}
