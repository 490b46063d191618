package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// The window is how much the copies of a budget keep in flight: Depth
// slots out at once, each request at most Request bytes. One controller
// per budget decides it (Budget.SetController), from what the copies
// measure of their own requests (Sample); copier's governor is that
// controller today: it fits the window to the rate cap, the latency it
// measures and --yield's cut. Nothing else changes the window while
// copies run, so the bytes in flight have one author.

// Window is the depth and request size of a budget's copies.
type Window struct {
	// Depth is how many slots may be out at once, from 1 to all of them.
	Depth int
	// Request, when positive, is the most one read or write moves: a
	// chunk planned from then on is no larger, and a chunk planned
	// larger (a verification cell) is moved in several requests. It is
	// rounded down to each copy's alignment, never below one unit of
	// it. 0 lets a request move a whole block.
	Request int
}

// SampleEvery is about how often a budget's controller hears what its
// copies measured, unless it asked for another period
// (Budget.SetSampleEvery).
const SampleEvery = 250 * time.Millisecond

// Sample is what the copies of a budget measured of their own requests
// since the last sample: completion latency (from submission to the
// completion being reaped) and how long each finished chunk had a request
// in flight. Requests the budget's copies never sent (a chunk waiting for
// the rate cap) are in neither.
type Sample struct {
	Elapsed  time.Duration
	Requests int           // reads, writes and zero ops that completed
	Latency  time.Duration // their mean
	// Least is the least latency of those that moved at least half the
	// request size; 0 when none did.
	Least time.Duration
	// Bytes are those of the chunks finished, Busy the time each of them
	// had a request in flight, summed: Busy/Bytes is how long a slot is
	// held per byte moved, so that cap*Busy/Bytes slots keep up with a
	// cap of cap bytes per second. Chunks that needed no I/O (a hole left
	// as it is) count in neither.
	Bytes int64
	Busy  time.Duration
	// Paced is the time requests waited in line for the rate caps
	// (pace.go) before they were sent: each copy's, summed over its
	// requests (a copy's line sends one at a time), and the mean over
	// the copies that reported in the sample, so that it is a share of
	// Elapsed for the budget however many copies share it. Summed over
	// the copies, the four jobs of a batch counted up to four times the
	// sample, and a batch that mostly waited on others' I/O (each job on
	// the cap a fifth of the time) was taken as held back by its cap. A
	// copy that waits on its cap is held back by the cap, whatever its
	// bytes say: a chunk moved in several requests (a 4 MiB
	// verification cell, 1/40 s of the cap a request) counts its bytes
	// when the last one completes, so at 8 MiB/s most 50 ms saw none
	// finish.
	Paced time.Duration
}

// Controller decides a budget's window from what its copies measure.
// Observe is called about every SampleEvery, on the thread of a copy that
// completed requests, never with the budget's lock held: it may call
// SetWindow, and must be quick.
type Controller interface {
	Observe(Sample)
}

// sampler accumulates a budget's Sample until it is handed out.
type sampler struct {
	mu      sync.Mutex
	ctrl    Controller
	s       Sample
	latency time.Duration // summed, for the mean
	since   time.Time
	// gen counts the samples handed out; runs is how many copies
	// reported in this one, for Paced's mean: a copy counts once
	// (member.sampled is the gen it was last counted in, plus one).
	gen  uint64
	runs int
	// every is how often a sample is due (SetSampleEvery); 0 for
	// SampleEvery. The copies read it to report to the budget often
	// enough (reportEvery), so it is atomic.
	every atomic.Int64
}

// period is how often a sample is due.
func (p *sampler) period() time.Duration {
	if d := time.Duration(p.every.Load()); d > 0 {
		return d
	}
	return SampleEvery
}

// add folds in what one copy measured (sampled is its member's mark of
// the sample it was last counted in), and returns the controller and the
// sample when one is due.
func (p *sampler) add(m *meter, sampled *uint64, now time.Time) (Controller, Sample, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.since.IsZero() {
		p.since = now
	}
	if *sampled != p.gen+1 {
		*sampled = p.gen + 1
		p.runs++
	}
	p.s.Requests += m.requests
	p.latency += m.latency
	if m.least > 0 && (p.s.Least == 0 || m.least < p.s.Least) {
		p.s.Least = m.least
	}
	p.s.Bytes += m.bytes
	p.s.Busy += m.busy
	p.s.Paced += m.paced
	if p.ctrl == nil || now.Sub(p.since) < p.period() {
		return nil, Sample{}, false
	}
	s := p.s
	s.Elapsed = now.Sub(p.since)
	if s.Requests > 0 {
		s.Latency = p.latency / time.Duration(s.Requests)
	}
	s.Paced /= time.Duration(p.runs)
	p.s, p.latency, p.since = Sample{}, 0, now
	p.gen, p.runs = p.gen+1, 0
	return p.ctrl, s, true
}

// meter counts what one run's requests took, between two reports to its
// budget.
type meter struct {
	requests int
	latency  time.Duration
	least    time.Duration
	bytes    int64
	busy     time.Duration
	paced    time.Duration // waited for the rate caps (Sample.Paced)
	last     time.Time     // of the last report
}

// reportEvery: a run hands its meter to the budget at most this often,
// so the budget's lock is not taken on every completion: a quarter of
// the budget's sample period.
func (b *Budget) reportEvery() time.Duration { return b.samples.period() / 4 }

// request counts one completion; full: it moved at least half a
// request, so that its latency may be the least (a file's short tail, a
// small zero write, say nothing of what a request of the window takes).
func (m *meter) request(d time.Duration, full bool) {
	m.requests++
	m.latency += d
	if full && (m.least == 0 || d < m.least) {
		m.least = d
	}
}

func (m *meter) chunk(n int, busy time.Duration) {
	m.bytes += int64(n)
	m.busy += busy
}

// sent stamps the slots of requests just submitted.
func (r *run) sent(reqs []Request) {
	now := time.Now()
	for _, q := range reqs {
		if q.Slot >= 0 {
			r.slots[q.Slot].sentAt = now
		}
	}
}

// measure counts a completion's latency, for its chunk and the meter.
func (r *run) measure(c Completion, now time.Time) {
	if c.Slot < 0 {
		return // a barrier: not a request the window sizes
	}
	s := &r.slots[c.Slot]
	d := now.Sub(s.sentAt)
	s.busy += d
	r.meter.request(d, c.N >= r.most/2)
	if p := r.job.Progress; p != nil && s.writing() {
		p.Writes.Add(1)
	}
}
