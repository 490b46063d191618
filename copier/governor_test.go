package copier

import (
	"math"
	"testing"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/time/rate"
)

// TestGovernor: the limiter follows the tighter of the caller's cap and
// the yield cut, and the budget's depth follows the rate (50 ms of it in
// flight at most) and the cut, never past the buffers there are.
func TestGovernor(t *testing.T) {
	const block = 64 << 10
	g := newGovernor(0, block, 8)
	b := engine.NewBudget(make([][]byte, 8))
	g.attach(b)
	check := func(step string, wantRate float64, wantDepth int) {
		t.Helper()
		if got := float64(g.lim.Limit()); got != wantRate && !(math.IsInf(wantRate, 1) && g.lim.Limit() == rate.Inf) {
			t.Errorf("%s: limit %v, want %v", step, got, wantRate)
		}
		if b.Depth() != wantDepth {
			t.Errorf("%s: depth %d, want %d", step, b.Depth(), wantDepth)
		}
		if g.lim.Burst() != block {
			t.Errorf("%s: burst %d, want one block", step, g.lim.Burst())
		}
	}
	check("no cap", math.Inf(1), 8)
	g.setCap(3 << 20)
	check("cap 3 MiB/s", 3<<20, 2)
	g.setYield(1<<20, 0)
	check("cut to 1 MiB/s", 1<<20, 1)
	g.setYield(1<<30, 2)
	check("cut above the cap", 3<<20, 2)
	g.setCap(0)
	check("no cap, cut", 1<<30, 2)
	g.setYield(0, 0)
	check("nothing", math.Inf(1), 8)
	g.setCap(-5)
	check("negative cap", math.Inf(1), 8)
	if g.capNow() != 0 {
		t.Errorf("cap %d after a negative one", g.capNow())
	}
	g.setCap(100 << 30)
	check("huge cap", 100<<30, 8)
}

// TestBatchGovernorYield: in a batch, each job's yield depth cut goes to
// the batch's governor, whose shared depth follows the deepest cut of the
// jobs still yielding, and comes back when they stop or end; a job's rate
// cut stays on its own limiter.
func TestBatchGovernorYield(t *testing.T) {
	const block = 64 << 10
	batch := newGovernor(0, block, 8)
	b := engine.NewBudget(make([][]byte, 8))
	batch.attach(b)
	j1, j2 := newGovernor(0, block, 8), newGovernor(0, block, 8)
	j1.shareWith(batch)
	j2.shareWith(batch)
	for _, step := range []struct {
		name  string
		do    func()
		depth int
	}{
		{"job 1 cuts to 3", func() { j1.setYield(1<<20, 3) }, 3},
		{"job 2 cuts to 2", func() { j2.setYield(0, 2) }, 2},
		{"job 1 stops cutting", func() { j1.setYield(0, 0) }, 2},
		{"job 2 ends", func() { batch.jobCut(j2, 0) }, 8},
	} {
		step.do()
		if b.Depth() != step.depth {
			t.Errorf("%s: shared depth %d, want %d", step.name, b.Depth(), step.depth)
		}
	}
	if j2.lim.Limit() != rate.Inf || batch.lim.Limit() != rate.Inf {
		t.Errorf("limits %v (job 2), %v (batch): a depth cut alone must not cap a rate", j2.lim.Limit(), batch.lim.Limit())
	}
	j1.setYield(1<<20, 0)
	if j1.lim.Limit() != 1<<20 || batch.lim.Limit() != rate.Inf {
		t.Errorf("job 1's rate cut: its limit %v, the batch's %v: the cut is the job's own", j1.lim.Limit(), batch.lim.Limit())
	}
}
