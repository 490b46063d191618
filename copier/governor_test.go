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
