package copier

import (
	"math"
	"sync"
	"time"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/time/rate"
)

// governor holds what may change while a copy runs, and applies it to the
// engine's rate limiter and to its budget's window (the slots out, the
// size of a request): the caller's rate cap (Options.MaxRate,
// Plan.SetMaxRate), the cut of the yield controller (yield.go), and the
// latency the engine measures. The tighter of cap and cut wins; requests
// are cut to 1/40 s of the rate, and the depth follows the rate and the
// latency, so that the cap holds wherever the device can give it
// (share.go). It is its budget's engine.Controller: the one author of
// what the copy keeps in flight.
type governor struct {
	mu     sync.Mutex
	lim    *rate.Limiter
	budget *engine.Budget // nil until Run has the buffers
	block  int            // the plan's block size
	unit   int            // the least a request moves: the burst never goes below it
	keep   bool           // the caller gave the block size: requests are not cut to the rate
	depth  int            // how many buffers the budget has
	cap    int64          // the caller's cap in bytes per second; 0 for none
	yRate  float64        // the yield controller's rate; 0 when it cuts nothing
	yDepth int            // the yield controller's depth; 0 when it cuts nothing
	// perByte is how long a slot is held per byte it moves (the engine's
	// Sample: Busy/Bytes), the highest seen lately: it rises at once with
	// the latency and decays slowly. 0 until measured.
	perByte float64
	// applied is the rate and burst last set, to wake the copies only
	// when they changed.
	applied struct {
		limit rate.Limit
		burst int
	}
	// shared, on a job of a batch, is the batch's governor: the budget is
	// the batch's, so the job's depth cut goes there; its rate cut stays
	// on the job's own limiter.
	shared *governor
	// jobCuts, on a batch's governor, are the depth cuts of the jobs that
	// yield; the shared depth follows the deepest cut.
	jobCuts map[*governor]int
	// jobSignals, on a batch's governor, are what each running job's
	// watcher says of others; the batch hears any job's. watchers are
	// the jobs' watchers, each of which counts the other jobs' requests
	// as the copy's own (batchwatch_linux.go).
	jobSignals map[*governor]engine.Signals
	watchers   batchWatchers
	// adapt: nobody gave the queue depth, so the good neighbour
	// (neighbour.go) sizes the bytes in flight; nb is it once a budget
	// is attached, nbWindow its last window, signals what the watcher
	// said of others.
	adapt    bool
	yield    bool // --yield: the good neighbour keeps a smaller share
	nb       *engine.Neighbour
	nbFirst  *engine.Neighbour // the copy's, for the report (a read pass may have its own)
	nbWindow engine.Window
	signals  engine.Signals
	leastReq int // the least request size set since the watcher asked (neighbour.go)
	// beats is how many watchers' heartbeats beat for the governor now,
	// beatAt the last beat, pausedTo the end of the last time the
	// process did not run (pause.go).
	beats            int
	beatAt, pausedTo time.Time
}

// newGovernor governs a copy (or a batch) of blocks of block bytes,
// aligned to unit, over depth buffers. keep: the caller chose the block
// size, and requests are not cut to the rate (a note says so when the
// block is over the fit). adapt: the caller did not choose the depth,
// and the good neighbour sizes the bytes in flight.
func newGovernor(capBPS int64, block, unit, depth int, keep, adapt bool) *governor {
	g := &governor{lim: rate.NewLimiter(rate.Inf, block), block: block, unit: max(unit, 1), depth: depth, cap: capBPS, keep: keep, adapt: adapt}
	g.applied.limit, g.applied.burst = rate.Inf, block
	g.apply()
	return g
}

// attach gives the governor the budget the copy's slots come from, and
// makes it that budget's controller. A read pass after the copy attaches
// its own.
func (g *governor) attach(b *engine.Budget) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.budget, g.depth = b, len(b.Buffers())
	g.attachNeighbour()
	b.SetController(g)
	g.apply()
}

// Observe takes what the engine measured (engine.Controller).
func (g *governor) Observe(s engine.Sample) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now := time.Now(); g.pausedSince(now.Add(-s.Elapsed), now) {
		// The process did not run for part of it (pause.go): its
		// latencies and throughput are the stop's, not the disk's.
		if g.nb != nil {
			g.nb.Skip()
		}
		return
	}
	if s.Bytes > 0 {
		g.perByte = max(s.Busy.Seconds()/float64(s.Bytes), g.perByte*perByteDecay)
	}
	g.observeNeighbour(s)
	g.apply()
}

// setCap changes the caller's cap; 0 removes it.
func (g *governor) setCap(bps int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cap = max(bps, 0)
	g.apply()
}

// capNow is the caller's cap.
func (g *governor) capNow() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cap
}

// setYield sets the yield controller's cut: a rate (0: none) and a depth
// (0: none). A job of a batch hands its depth cut to the batch's governor.
func (g *governor) setYield(bps float64, depth int) {
	g.mu.Lock()
	g.yRate, g.yDepth = bps, depth
	g.apply()
	shared := g.shared
	g.mu.Unlock()
	if shared != nil {
		shared.jobCut(g, depth)
	}
}

// shareWith makes g a job's governor in a batch whose governor is batch.
func (g *governor) shareWith(batch *governor) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shared = batch
}

// jobCut records a job's depth cut on a batch's governor (0: none, as when
// the job ends) and sets the shared depth to the deepest cut.
func (g *governor) jobCut(job *governor, depth int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.jobCuts == nil {
		g.jobCuts = map[*governor]int{}
	}
	if depth > 0 {
		g.jobCuts[job] = depth
	} else {
		delete(g.jobCuts, job)
	}
	g.yDepth = 0
	for _, d := range g.jobCuts {
		if g.yDepth == 0 || d < g.yDepth {
			g.yDepth = d
		}
	}
	g.apply()
}

// effectiveRate is the tighter of the cap and the cut. Called with mu held.
func (g *governor) effectiveRate() float64 {
	r := math.Inf(1)
	if g.cap > 0 {
		r = float64(g.cap)
	}
	if g.yRate > 0 {
		r = min(r, g.yRate)
	}
	return r
}

// apply sets the limiter and the budget's window, and wakes the copies
// when the rate changed. Called with mu held.
func (g *governor) apply() {
	r := g.effectiveRate()
	limit, burst, request := rate.Inf, g.block, 0
	if !math.IsInf(r, 1) {
		limit = rate.Limit(r)
		if !g.keep {
			// A multiple of the page once that large (fitSize); at
			// least one unit (a sector): a buffered copy could
			// otherwise move a byte per request under a tiny cap.
			request = g.block
			if step := r / capSteps; step < float64(g.block) {
				request = int(fitSize(int64(step), int64(g.unit)))
			}
			burst = max(request, g.unit) // no more passes at once after a pause
		}
	}
	changed := g.setLimiter(limit, burst)
	if g.budget == nil {
		return
	}
	depth := g.depth
	if !math.IsInf(r, 1) {
		depth = min(depth, g.capDepth(r, request))
	}
	if g.yDepth > 0 {
		depth = min(depth, g.yDepth)
	}
	depth, request = g.neighbourCut(depth, request)
	g.budget.SetWindow(engine.Window{Depth: depth, Request: request})
	g.noteRequest(request)
	if changed {
		g.budget.Wake() // a copy waiting for the old rate looks again now
	}
}

// setLimiter gives the limiter a new limit and burst, when they changed,
// and says whether they did. x/time/rate counts the tokens gathered
// since its last change at the limit it had: at rate.Inf, over no time
// at all, that is 0*Inf, NaN, after which the limiter never limits again.
// So the burst only changes while the limit is finite: after a finite
// limit is set (the tokens gathered without a cap are then cut to the
// new burst at the next request), before rate.Inf is. Called with mu
// held.
func (g *governor) setLimiter(limit rate.Limit, burst int) bool {
	if limit == g.applied.limit && burst == g.applied.burst {
		return false
	}
	now := time.Now()
	if limit == rate.Inf {
		if g.applied.limit != rate.Inf {
			g.lim.SetBurstAt(now, burst)
		}
		g.lim.SetLimitAt(now, limit)
	} else {
		g.lim.SetLimitAt(now, limit)
		g.lim.SetBurstAt(now, burst)
	}
	g.applied.limit, g.applied.burst = limit, burst
	return true
}

// capDepth is how many slots keep up with rate r in requests of request
// bytes (0: a block): the slots the measured latency needs, with
// headroom, and one waiting for the cap. Before anything was measured, 50
// ms of the cap.
func (g *governor) capDepth(r float64, request int) int {
	if g.perByte == 0 {
		size := float64(g.block)
		if request > 0 {
			size = float64(request)
		}
		return max(1, int(r/capInFlight/size))
	}
	return 1 + int(math.Ceil(min(capHeadroom*r*g.perByte, float64(g.depth))))
}

// SetMaxRate changes the rate cap, in bytes of the range per second (0
// removes it), before or while Run runs; it is safe to call from any
// goroutine. It takes effect at once: a request waiting for the old cap
// waits for the new one instead, requests are cut to 1/40 s of the new
// cap (unless Options.BlockSize was given) and the depth follows it;
// requests already in flight finish. A read pass after the copy
// (Options.Verify, a resumed Options.Checksum) runs under the cap too.
// The cap cuts the requests, not the buffers, which Prepare sized by
// the first cap as share.go's rule of the capped buffers says: a copy
// started under a tiny cap that is raised or lifted later moves whole
// blocks of a MiB, not the 512 bytes that 1/40 s of 1 B/s is, in the
// buffers it has.
func (p *Plan) SetMaxRate(bytesPerSecond int64) { p.gov.setCap(bytesPerSecond) }

// MaxRate is the rate cap now, in bytes per second; 0 for none.
func (p *Plan) MaxRate() int64 { return p.gov.capNow() }

// keepShare is the share of its speed alone the good neighbour aims at
// beside others.
func (g *governor) keepShare() float64 {
	if g.yield {
		return engine.NeighbourYieldKeep
	}
	return engine.NeighbourKeep
}

// startGovernor makes what applies the rate cap and the yield cut, once
// the block size is final (chooseTrust may round it up after fitShare):
// the limiter's burst is one block.
func (p *Plan) startGovernor() error {
	p.gov = newGovernor(p.opts.MaxRate, p.BlockSize, p.unit(), p.QueueDepth, p.opts.BlockSize > 0, p.opts.QueueDepth == 0)
	p.gov.yield = p.opts.Yield
	if p.gov.adapt && p.QueueDepth > 1 {
		p.note("good neighbour: all %d slots while the copy is alone on its disks; beside others, the least window that moves %.0f%% of its speed alone (of the most it moves there, when less; a given queue depth stays)", p.QueueDepth, 100*p.gov.keepShare())
	}
	return nil
}
