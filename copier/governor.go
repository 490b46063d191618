package copier

import (
	"math"
	"sync"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/time/rate"
)

// governor holds what may change while a copy runs, and applies it to the
// engine's rate limiter and to its budget's depth: the caller's rate cap
// (Options.MaxRate, Plan.SetMaxRate) and the cut of the yield controller
// (yield.go). The tighter of the two wins; the depth follows the rate, so
// that no more than 50 ms of it is in flight (share.go).
type governor struct {
	mu     sync.Mutex
	lim    *rate.Limiter
	budget *engine.Budget // nil until Run has the buffers
	block  int
	depth  int     // the plan's depth: how many buffers there are
	cap    int64   // the caller's cap in bytes per second; 0 for none
	yRate  float64 // the yield controller's rate; 0 when it cuts nothing
	yDepth int     // the yield controller's depth; 0 when it cuts nothing
	// shared, on a job of a batch, is the batch's governor: the budget is
	// the batch's, so the job's depth cut goes there; its rate cut stays
	// on the job's own limiter.
	shared *governor
	// jobCuts, on a batch's governor, are the depth cuts of the jobs that
	// yield; the shared depth follows the deepest cut.
	jobCuts map[*governor]int
}

func newGovernor(capBPS int64, block, depth int) *governor {
	g := &governor{lim: rate.NewLimiter(rate.Inf, block), block: block, depth: depth, cap: capBPS}
	g.apply()
	return g
}

// attach gives the governor the budget the copy's slots come from.
func (g *governor) attach(b *engine.Budget) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.budget = b
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

// apply sets the limiter and the budget. Called with mu held.
func (g *governor) apply() {
	r := g.effectiveRate()
	if math.IsInf(r, 1) {
		g.lim.SetLimit(rate.Inf)
	} else {
		g.lim.SetLimit(rate.Limit(r))
	}
	if g.budget == nil {
		return
	}
	depth := g.depth
	if !math.IsInf(r, 1) {
		depth = capDepth(r, g.block, depth)
	}
	if g.yDepth > 0 {
		depth = min(depth, g.yDepth)
	}
	g.budget.SetDepth(depth)
}

// SetMaxRate changes the rate cap, in bytes of the range per second (0
// removes it), before or while Run runs; it is safe to call from any
// goroutine. It takes effect at the next request: requests already in
// flight finish. The block size and buffers were fitted to the cap that
// Prepare saw; a cap set much lower than that may let a block through at
// once, never more.
func (p *Plan) SetMaxRate(bytesPerSecond int64) { p.gov.setCap(bytesPerSecond) }

// MaxRate is the rate cap now, in bytes per second; 0 for none.
func (p *Plan) MaxRate() int64 { return p.gov.capNow() }

// startGovernor makes what applies the rate cap and the yield cut, once
// the block size is final (chooseTrust may round it up after fitShare):
// the limiter's burst is one block.
func (p *Plan) startGovernor() error {
	p.gov = newGovernor(p.opts.MaxRate, p.BlockSize, p.QueueDepth)
	return nil
}
