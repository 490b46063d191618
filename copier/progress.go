package copier

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// Phase is what a copy is doing: PhaseCopy (after PhaseMap where SRC's
// holes are mapped), PhaseSync while the fdatasync barrier runs, then
// PhaseDone; PhaseVerify while a copy is read back. Its text form is
// "copy", "map", "sync", "verify", "done".
type Phase = engine.Phase

// Phases (see Phase).
const (
	PhaseCopy   = engine.PhaseCopy
	PhaseMap    = engine.PhaseMap
	PhaseSync   = engine.PhaseSync
	PhaseVerify = engine.PhaseVerify
	PhaseDone   = engine.PhaseDone
)

// DefaultProgressInterval is how often Options.OnProgress is called when
// Options.ProgressInterval is 0.
const DefaultProgressInterval = time.Second

// Status is a copy's progress at one moment: what the ringcp command
// prints with --progress json, one object a line, with these JSON names.
// BytesDone counts the range's bytes finished on DST (written and
// completed, made zero, or left as a hole), never bytes submitted; it
// only grows. Percent reaches 100 only in PhaseDone, after the barrier:
// while it runs, a copy whose bytes are all written shows 99.99.
type Status struct {
	Phase       Phase   `json:"phase"`
	BytesDone   int64   `json:"bytes_done"`
	BytesTotal  int64   `json:"bytes_total"`
	Percent     float64 `json:"percent"`      // 0 to 100, two decimals, rounded down
	BytesData   int64   `json:"bytes_data"`   // of BytesDone: written as data
	BytesZeroed int64   `json:"bytes_zeroed"` // of BytesDone: made zero on DST
	BytesHoles  int64   `json:"bytes_holes"`  // of BytesDone: left as holes
	BytesRead   int64   `json:"bytes_read"`
	// BytesIn counts the bytes read from SRC's transport when they are
	// not the ones copied: a compressed SRC's compressed bytes.
	BytesIn        int64   `json:"bytes_in,omitempty"`
	Seconds        float64 `json:"seconds"`          // since Run started
	BytesPerSecond float64 `json:"bytes_per_second"` // of BytesDone, smoothed over a few seconds
	ETASeconds     float64 `json:"eta_seconds"`      // to the end of the writes; -1 while unknown
}

// rateWindow is the time constant of the rate's smoothing: long enough
// that one slow request does not swing it, short enough to follow a
// device that changes speed.
const rateWindow = 3 * time.Second

// meter turns a copy's counters into Statuses. Status may be called from
// any goroutine, while Run runs.
type meter struct {
	p     *engine.Progress
	total int64
	src   atomic.Pointer[srcIO] // a SRC that moves its own bytes (watch)

	mu       sync.Mutex
	start    time.Time // when Run started; zero before
	last     time.Time // the previous rate sample
	lastDone int64
	rate     float64 // the moving average, as if it had started at 0
	weight   float64 // the weight of the samples in rate (1 once it is long)
}

func newMeter(p *engine.Progress, total int64) *meter {
	return &meter{p: p, total: total}
}

// Status is the copy's progress now. It may be called from any goroutine,
// before, while and after Run runs.
func (p *Plan) Status() Status {
	if p.meter == nil {
		return Status{ETASeconds: -1}
	}
	return p.meter.status(time.Now())
}

func (m *meter) status(now time.Time) Status {
	// Done first: the split is counted before Done, so the parts never
	// fall behind the sum read here.
	s := Status{Phase: m.p.Phase(), BytesDone: m.p.Done.Load(), BytesTotal: m.total}
	s.BytesData, s.BytesZeroed, s.BytesHoles = m.p.Data.Load(), m.p.Zeroed.Load(), m.p.Holes.Load()
	s.BytesRead = m.p.Read.Load()
	m.fromSrc(&s)
	s.Percent = percent(s.BytesDone, s.BytesTotal, s.Phase)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.start.IsZero() {
		s.ETASeconds = -1
		return s
	}
	s.Seconds = roundTo(now.Sub(m.start).Seconds(), 3)
	s.BytesPerSecond = math.Round(m.sample(now, s.BytesDone))
	s.ETASeconds = eta(s)
	return s
}

// sample folds the bytes done since the last sample into the smoothed
// rate (an exponential moving average over rateWindow, which weighs
// samples by the time they cover, however irregular) and returns it.
// The clock starts at the first byte done: the time before it (opening
// the ends, mapping SRC's holes) is no rate. The average is divided by
// the weight its samples have so far, so that in the first seconds it is
// the rate of those seconds, not that rate pulled towards 0 (or towards
// a first sample of a few milliseconds) for several rateWindows.
func (m *meter) sample(now time.Time, done int64) float64 {
	dt := now.Sub(m.last)
	switch {
	case dt < 50*time.Millisecond:
		return m.current() // too soon to measure anything but noise
	case m.weight == 0 && done <= m.lastDone:
		m.last = now // nothing moved yet
		return 0
	}
	inst := float64(done-m.lastDone) / dt.Seconds()
	w := 1 - math.Exp(-dt.Seconds()/rateWindow.Seconds())
	m.rate += w * (inst - m.rate)
	m.weight += w * (1 - m.weight)
	m.last, m.lastDone = now, done
	return m.current()
}

// doneBefore counts n bytes as done before this run (a resumed copy's
// part an earlier run copied): no rate of this run's.
func (m *meter) doneBefore(n int64) {
	m.mu.Lock()
	m.lastDone += n
	m.mu.Unlock()
}

// current is the average without its start at 0.
func (m *meter) current() float64 {
	if m.weight == 0 {
		return 0
	}
	return m.rate / m.weight
}

func percent(done, total int64, ph Phase) float64 {
	switch {
	case ph == PhaseDone:
		return 100
	case total <= 0:
		return 0
	}
	pct := math.Floor(float64(done)*10000/float64(total)) / 100
	return min(pct, 99.99) // 100 means done: synced, and named
}

func eta(s Status) float64 {
	left := s.BytesTotal - s.BytesDone
	switch {
	case s.Phase == PhaseDone:
		return 0
	case s.BytesTotal < 0:
		return -1 // the end is not known
	case left <= 0:
		return 0
	case s.BytesPerSecond <= 0:
		return -1
	}
	return roundTo(float64(left)/s.BytesPerSecond, 1)
}

func roundTo(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// begin starts the clock and, with Options.OnProgress, the calls to it,
// and returns the function that ends them: it says PhaseDone when the copy
// completed, and makes the last call, after which there are no more.
func (m *meter) begin(o *Options) func(complete bool) {
	now := time.Now()
	m.mu.Lock()
	m.start, m.last, m.lastDone, m.rate, m.weight = now, now, 0, 0, 0
	m.mu.Unlock()
	m.p.SetPhase(PhaseCopy)
	report := o.OnProgress
	if report == nil {
		return func(complete bool) { m.finish(complete) }
	}
	every := o.ProgressInterval
	if every <= 0 {
		every = DefaultProgressInterval
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				report(m.status(now))
			}
		}
	}()
	return func(complete bool) {
		stop()
		<-done
		m.finish(complete)
		report(m.status(time.Now()))
	}
}

func (m *meter) finish(complete bool) {
	if complete {
		m.p.SetPhase(PhaseDone)
	}
}
