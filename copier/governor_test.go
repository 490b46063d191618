package copier

import (
	"math"
	"testing"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"golang.org/x/time/rate"
)

// TestGovernor: the limiter follows the tighter of the caller's cap and
// the yield cut; under a rate, requests are cut to 1/40 s of it and the
// burst with them; the budget's depth follows the rate (50 ms of it in
// flight before anything is measured) and the cut, never past the
// buffers there are.
func TestGovernor(t *testing.T) {
	const block, unit = 64 << 10, 4096
	g := newGovernor(0, block, unit, 8, false, false)
	b := engine.NewBudget(make([][]byte, 8))
	g.attach(b)
	check := func(step string, wantRate float64, wantDepth, wantRequest int) {
		t.Helper()
		if got := float64(g.lim.Limit()); got != wantRate && !(math.IsInf(wantRate, 1) && g.lim.Limit() == rate.Inf) {
			t.Errorf("%s: limit %v, want %v", step, got, wantRate)
		}
		w := b.Window()
		if w.Depth != wantDepth || w.Request != wantRequest {
			t.Errorf("%s: window %+v, want depth %d, request %d", step, w, wantDepth, wantRequest)
		}
		wantBurst := block
		if wantRequest > 0 {
			wantBurst = max(wantRequest, unit)
		}
		if g.lim.Burst() != wantBurst {
			t.Errorf("%s: burst %d, want %d", step, g.lim.Burst(), wantBurst)
		}
	}
	check("no cap", math.Inf(1), 8, 0)
	g.setCap(3 << 20)
	check("cap 3 MiB/s", 3<<20, 2, block)
	g.setYield(1<<20, 0)
	check("cut to 1 MiB/s", 1<<20, 2, (1<<20)/40/unit*unit)
	g.setYield(1<<30, 2)
	check("cut above the cap", 3<<20, 2, block)
	g.setCap(0)
	check("no cap, cut", 1<<30, 2, block)
	g.setYield(0, 0)
	check("nothing", math.Inf(1), 8, 0)
	g.setCap(-5)
	check("negative cap", math.Inf(1), 8, 0)
	if g.capNow() != 0 {
		t.Errorf("cap %d after a negative one", g.capNow())
	}
	g.setCap(100 << 30)
	check("huge cap", 100<<30, 8, block)
	g.setCap(1)
	check("1 byte per second", 1, 1, unit) // a request and the burst are one unit
}

// TestGovernorPageRequests: ends of 512-byte sectors under a cap get
// requests of whole pages: 1/40 s of 8 MiB/s cut to the sector was
// 209408 bytes, and ext4 (blocks of 4 KiB) zeroed the partial blocks
// around each O_DIRECT write, five times the copy's writes on the disk,
// which the watcher took for others' I/O. Under 4 KiB, whole sectors.
// So are the blocks fitted to a cgroup limit (an eighth of a second).
func TestGovernorPageRequests(t *testing.T) {
	const block, unit = 4 << 20, 512
	for _, c := range []struct {
		bps  int64
		want int
	}{{8 << 20, 208896}, {10_000_000, 249856}, {100_000, 2048}, {1, unit}, {1 << 30, block}} {
		g := newGovernor(c.bps, block, unit, 8, false, false)
		b := engine.NewBudget(make([][]byte, 8))
		g.attach(b)
		if got := b.Window().Request; got != c.want {
			t.Errorf("cap %d B/s: requests of %d bytes, want %d", c.bps, got, c.want)
		}
	}
	in := sizing{src: align.Geometry{OffsetAlign: unit, MemAlign: unit, LogicalBlockSize: unit, DirectSupported: true}, limit: 10_000_000, limitWhy: "cgroup"}
	in.dst = in.src
	if s := decideSizes(in); s.block%4096 != 0 {
		t.Errorf("cgroup limit of 10 MB/s: block size %d, want whole pages", s.block)
	}
}

// TestGovernorLatency: the depth under a cap follows the latency the
// engine measures, so the cap holds when the latency rises: 50 MiB/s in
// 1.25 MiB requests needs 2 slots at 10 ms a request, 7 or more at 65
// ms; a spike is met at once and forgotten slowly; never past the
// buffers.
func TestGovernorLatency(t *testing.T) {
	const block, capBPS = 1280 << 10, 50 << 20
	g := newGovernor(capBPS, block, 4096, 16, false, false)
	b := engine.NewBudget(make([][]byte, 16))
	g.attach(b)
	if d := b.Depth(); d != 2 {
		t.Fatalf("before any sample: depth %d, want 2 (50 ms of the cap)", d)
	}
	// A chunk's read and write, each lat long: the slot is held 2*lat per
	// block moved.
	observe := func(lat time.Duration) int {
		g.Observe(engine.Sample{Elapsed: engine.SampleEvery, Requests: 20, Latency: lat, Least: lat,
			Bytes: 10 * block, Busy: 20 * lat})
		return b.Depth()
	}
	fast := observe(5 * time.Millisecond)
	if fast < 2 || fast > 3 {
		t.Errorf("5 ms requests: depth %d, want 2 or 3", fast)
	}
	spike := observe(65 * time.Millisecond)
	if need := int(math.Ceil(capBPS * 0.130 / block)); spike < need+1 {
		t.Errorf("65 ms requests: depth %d; %d slots busy are needed to keep 50 MiB/s, and one waiting", spike, need)
	}
	after := observe(5 * time.Millisecond)
	if after < spike-1 || after > spike {
		t.Errorf("one fast sample after the spike: depth %d, want it to fall slowly from %d", after, spike)
	}
	for range 60 {
		after = observe(5 * time.Millisecond)
	}
	if after != fast {
		t.Errorf("a while after the spike: depth %d, want %d again", after, fast)
	}
	if d := observe(10 * time.Second); d != 16 {
		t.Errorf("10 s requests: depth %d, want all 16 buffers", d)
	}
}

// TestBatchGovernorYield: in a batch, each job's yield depth cut goes to
// the batch's governor, whose shared depth follows the deepest cut of the
// jobs still yielding, and comes back when they stop or end; a job's rate
// cut stays on its own limiter.
func TestBatchGovernorYield(t *testing.T) {
	const block = 64 << 10
	batch := newGovernor(0, block, 4096, 8, false, false)
	b := engine.NewBudget(make([][]byte, 8))
	batch.attach(b)
	j1, j2 := newGovernor(0, block, 4096, 8, false, false), newGovernor(0, block, 4096, 8, false, false)
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
