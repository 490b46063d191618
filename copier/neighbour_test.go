package copier

import (
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// queuedSample is a sample in which the requests waited three times
// their least: a standing queue, and no more throughput for it.
func queuedSample() engine.Sample {
	return engine.Sample{Elapsed: engine.NeighbourEvery, Requests: 50, Latency: 3 * time.Millisecond,
		Least: time.Millisecond, Bytes: 25 << 20, Busy: 100 * time.Millisecond}
}

// TestNeighbourDefault: with no queue depth given, the window keeps
// every slot while the copy is alone, whatever its latency (nobody waits
// behind its queue); the watcher saying others use the disk brings it
// down at once, to a MiB at most, and the budget samples often enough to
// settle within a short copy; the report says what it chose.
func TestNeighbourDefault(t *testing.T) {
	const block = 8 << 20
	g := newGovernor(0, block, 4096, 8, false, true)
	b := engine.NewBudget(make([][]byte, 8))
	g.attach(b)
	if w := b.Window(); w.Depth != 8 || w.Request != 0 {
		t.Fatalf("start: window %+v, want every slot", w)
	}
	for range 6 {
		g.Observe(queuedSample())
	}
	if w := b.Window(); w.Depth != 8 || w.Request != 0 {
		t.Errorf("alone, a standing queue: window %+v, want every slot still", w)
	}
	g.setSignals(true, false)
	if w := b.Window(); w.Request == 0 || w.Depth*w.Request > 1<<20 {
		t.Errorf("others came: window %+v, want a MiB in flight at most", w)
	}
	g.Observe(queuedSample())
	r := g.neighbourReport()
	if r == nil || r.Samples != 7 || r.MaxBytes != 8*block || r.MinBytes >= r.MaxBytes || r.LeastLatency != 0.001 || r.Keep != engine.NeighbourKeep {
		t.Errorf("report %+v", r)
	}
}

// TestNeighbourStartsBesideOthers: others seen before the copy started
// (the watcher looks before it) give the budget a small window from its
// first request, never every slot; with --yield it keeps a smaller share.
func TestNeighbourStartsBesideOthers(t *testing.T) {
	const block = 8 << 20
	g := newGovernor(0, block, 4096, 8, false, true)
	g.yield = true
	g.setSignals(true, false) // before the budget is attached
	b := engine.NewBudget(make([][]byte, 8))
	g.attach(b)
	if w := b.Window(); w.Request == 0 || w.Depth*w.Request > 1<<20 {
		t.Errorf("others before the copy: first window %+v, want a MiB in flight at most", w)
	}
	if r := g.neighbourReport(); r.Keep != engine.NeighbourYieldKeep {
		t.Errorf("--yield: keeps %.2f of its best, want %.2f", r.Keep, engine.NeighbourYieldKeep)
	}
}

// TestNeighbourOwnRequests: the watcher counts the copy's own requests
// on the disk from the least request size of the window since it last
// asked: requests cut to 512 KiB are 16 times as many as blocks of
// 8 MiB, and counted as blocks they were taken for others' (and the copy
// never looked alone again).
func TestNeighbourOwnRequests(t *testing.T) {
	const block = 8 << 20
	g := newGovernor(0, block, 4096, 8, false, true)
	b := engine.NewBudget(make([][]byte, 8))
	g.attach(b)
	if r := g.leastRequest(); r != block {
		t.Errorf("every slot: least request %d, want a block", r)
	}
	g.setSignals(true, false)
	g.setSignals(false, false) // others gone: whole blocks again
	if r := g.leastRequest(); r == 0 || r >= block {
		t.Errorf("after a window of cut requests: least request %d, want the cut size", r)
	}
	if r := g.leastRequest(); r != block {
		t.Errorf("asked again: least request %d, want a block (the window now)", r)
	}
}

// TestNeighbourFixedDepth: a queue depth given (--queue-depth) stays: no
// controller, whatever the latency, and no report.
func TestNeighbourFixedDepth(t *testing.T) {
	g := newGovernor(0, 8<<20, 4096, 8, false, false)
	b := engine.NewBudget(make([][]byte, 8))
	g.attach(b)
	for range 6 {
		g.Observe(queuedSample())
	}
	if w := b.Window(); w.Depth != 8 {
		t.Errorf("depth given: window %+v, want all 8 slots", w)
	}
	if r := g.neighbourReport(); r != nil {
		t.Errorf("depth given: report %+v, want none", r)
	}
}

// TestNeighbourUnderCap: the window is the tighter of the controller's
// and the cap's: under a small cap the cap's depth and requests hold,
// however large the controller's window.
func TestNeighbourUnderCap(t *testing.T) {
	const block = 8 << 20
	g := newGovernor(0, block, 4096, 8, false, true)
	b := engine.NewBudget(make([][]byte, 8))
	g.attach(b)
	g.setCap(4 << 20)
	if w := b.Window(); w.Depth > 2 || w.Request != (4<<20)/capSteps/4096*4096 { // whole pages (fitSize)
		t.Errorf("cap 4 MiB/s: window %+v, want the cap's", w)
	}
	g.Observe(queuedSample())
	if w := b.Window(); w.Depth > 2 || w.Request > (4<<20)/capSteps {
		t.Errorf("cap 4 MiB/s, after a sample: window %+v, want the cap's at most", w)
	}
}

// TestNeighbourBatchSignals: a job of a batch tells the batch's governor,
// whose controller sizes the shared budget, of others on its disks.
func TestNeighbourBatchSignals(t *testing.T) {
	batch := newGovernor(0, 1<<20, 4096, 8, false, true)
	job := newGovernor(0, 1<<20, 4096, 8, false, true)
	job.shareWith(batch)
	job.setSignals(true, true)
	batch.mu.Lock()
	sig := batch.signals
	batch.mu.Unlock()
	if !sig.Others || !sig.Suffering {
		t.Errorf("batch heard %+v", sig)
	}
}
