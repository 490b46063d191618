package copier

import (
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// queuedSample is a quarter second in which the requests waited three
// times their least: a standing queue, and no more throughput for it.
func queuedSample() engine.Sample {
	return engine.Sample{Elapsed: engine.SampleEvery, Requests: 50, Latency: 3 * time.Millisecond,
		Least: time.Millisecond, Bytes: 100 << 20, Busy: 100 * time.Millisecond}
}

// TestNeighbourDefault: with no queue depth given, the window starts
// with every slot and comes down while the latency says the slots only
// wait; the report says what it chose.
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
	if w := b.Window(); w.Depth >= 8 {
		t.Errorf("after a standing queue: window %+v, want fewer slots", w)
	}
	r := g.neighbourReport()
	if r == nil || r.Samples != 6 || r.MaxBytes != 8*block || r.MinBytes >= r.MaxBytes || r.LeastLatency != 0.001 {
		t.Errorf("report %+v", r)
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
	if w := b.Window(); w.Depth > 2 || w.Request != (4<<20)/capSteps {
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
