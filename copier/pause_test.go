package copier

import (
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// steadySample is a sample of a copy moving rate bytes per second in
// requests of a MiB.
func steadySample(elapsed time.Duration, rate float64) engine.Sample {
	bytes := int64(rate * elapsed.Seconds())
	return engine.Sample{Elapsed: elapsed, Requests: max(int(bytes>>20), 1), Latency: time.Millisecond,
		Least: time.Millisecond, Bytes: bytes, Busy: elapsed}
}

// TestNeighbourPausedProcess: a copy stopped four times for 3 s
// (SIGSTOP, SIGCONT) beside others. The samples that span a stop moved
// next to nothing over seconds: judged, the summary said "held back
// 12.3 s by others' I/O, down to 0% of its speed alone (its floor of 50%
// kept it moving 12.3 s)" of such a copy (by hand, beside a busy bench),
// though nothing but the stop held it. The heartbeat tells the stop,
// whichever runs first after it: the heartbeat (it saw the pause) or
// the copy's thread handing in the sample (the heartbeat is late).
func TestNeighbourPausedProcess(t *testing.T) {
	const block, solo, stop = 8 << 20, 400 << 20, 3 * time.Second
	g := newGovernor(0, block, 4096, 8, false, true)
	b := engine.NewBudget(make([][]byte, 8))
	g.attach(b)
	g.beatStart(time.Now())
	for range 40 { // alone: it learns its speed alone
		g.Observe(steadySample(engine.NeighbourEvery, solo))
	}
	g.setSignals(true, false)
	for range 120 { // beside others it moves its share
		g.Observe(steadySample(engine.NeighbourEvery, 0.8*solo))
	}
	before := g.neighbourReport()
	for i := range 4 {
		// Stopped for 3 s: the heartbeat last beat then.
		g.mu.Lock()
		g.beatAt = time.Now().Add(-stop)
		g.mu.Unlock()
		if i%2 == 1 {
			g.beat(time.Now()) // the heartbeat runs first after the stop
		}
		g.Observe(steadySample(stop, 1<<20)) // a MiB reaped in the sample that spans the stop
		g.beat(time.Now())
		for range 40 {
			g.Observe(steadySample(engine.NeighbourEvery, 0.8*solo))
		}
	}
	r := g.neighbourReport()
	if held, floor := r.HeldSeconds-before.HeldSeconds, r.FloorSeconds-before.FloorSeconds; held > 0.5 || floor > 0.5 {
		t.Errorf("stopped 4 x %v: held back %.1f s by others, floor %.1f s more than before the stops (report %+v); want the stops not judged",
			stop, held, floor, r)
	}
}
