package copier

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/units"
)

// A good neighbour by default (issue 27). When nobody gave the queue
// depth, the governor hands what the engine measures to engine.Neighbour,
// which sizes the bytes in flight: every slot while the copy is alone on
// its disks (a copy alone is as fast as before); once others use them, a
// slow start from one request of 128 KiB up to a window that moves 3/4
// of its speed alone (half with --yield; of the most it moves beside
// them, when that is less or it was never alone), then a search for the
// least such window, held there, so that others' small requests do not
// wait behind a standing queue of the copy's. The watcher beside the copy (yield_linux.go: the
// disk's statistics, a probe read, PSI) tells it when others use the disk
// and when they suffer, and looks before the copy starts, so that a copy
// started beside others never sends every slot. The window is the
// tighter of its own and the rate cap's (share.go) and --yield's cut;
// --queue-depth keeps the depth fixed. A floor of half its solo speed is
// never given up: the summary says when others held the copy back.

// attachNeighbour gives the governor its controller for the budget just
// attached: the one it had, when the budget has as many slots (a read
// pass after the copy goes on with what the copy learnt). Called with mu
// held.
func (g *governor) attachNeighbour() {
	if !g.adapt {
		return
	}
	unit := g.unit
	if g.keep {
		unit = g.block // the caller's block size: only the depth changes
	}
	if g.nb == nil || g.nb.Slots() != g.depth {
		g.nb = engine.NewNeighbour(g.depth, g.block, unit)
		if g.yield {
			g.nb.SetKeep(engine.NeighbourYieldKeep)
		}
		if g.nbFirst == nil {
			g.nbFirst = g.nb
		}
	}
	g.budget.SetSampleEvery(engine.NeighbourEvery)
	g.nbWindow = g.nb.Hear(g.signals) // others seen before the copy: no full window first
}

// observeNeighbour steps the controller. Called with mu held.
func (g *governor) observeNeighbour(s engine.Sample) {
	if g.nb == nil {
		return
	}
	sig := g.signals
	if r := g.effectiveRate(); !math.IsInf(r, 1) {
		sig.Cap = r
	}
	g.nbWindow = g.nb.Step(s, sig)
}

// neighbourCut is the window's depth and request size within the
// controller's. Called with mu held.
func (g *governor) neighbourCut(depth, request int) (int, int) {
	if g.nb == nil {
		return depth, request
	}
	depth = min(depth, g.nbWindow.Depth)
	if r := g.nbWindow.Request; r > 0 && (request == 0 || r < request) {
		request = r
	}
	return depth, request
}

// noteRequest keeps the least request size the window had since the
// watcher last asked (leastRequest). Called with mu held.
func (g *governor) noteRequest(request int) {
	if request == 0 {
		request = g.block
	}
	if g.leastReq == 0 || request < g.leastReq {
		g.leastReq = request
	}
}

// leastRequest is the least size of the copy's requests since it was
// last asked (a batch's, for a job of one), 0 before any window was set:
// the watcher counts the copy's own requests on the disk with it, and
// the window's cut requests are more of them than blocks would be.
func (g *governor) leastRequest() int {
	g.mu.Lock()
	shared := g.shared
	least := g.leastReq
	if g.budget != nil {
		g.leastReq = 0
		g.noteRequest(g.budget.Window().Request) // what it is now counts for the next tick
	}
	g.mu.Unlock()
	if shared != nil {
		return shared.leastRequest()
	}
	return least
}

// slotBytes is the most the copy can have in flight: every buffer of
// its budget (the batch's, for a job of one).
func (g *governor) slotBytes() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shared != nil {
		return g.shared.slotBytes()
	}
	return int64(max(g.depth, 1)) * int64(g.block)
}

// setSignals says whether others use the copy's disks and whether they
// suffer. A job of a batch hands them to the batch's governor, whose
// budget the controller sizes.
func (g *governor) setSignals(others, suffering bool) {
	g.hear(others, suffering)
	if shared := g.batch(); shared != nil {
		shared.jobSignal(g, &engine.Signals{Others: others, Suffering: suffering})
	}
}

// hear gives the controller the signals.
func (g *governor) hear(others, suffering bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.signals.Others, g.signals.Suffering = others, suffering
	if g.nb != nil {
		g.nbWindow = g.nb.Hear(g.signals) // others came or went: at once
		g.apply()
	}
}

// batch is the batch's governor of a job's; nil for a copy alone.
func (g *governor) batch() *governor {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shared
}

// jobSignal records what a job's watcher says (nil: the job ended) on a
// batch's governor, whose controller hears whether any job sees others
// and any sees them suffer. Heard from each job in turn, a batch whose
// jobs use different disks, one of them busy, heard others come and go
// every tick, and grew from its least window each time.
func (g *governor) jobSignal(job *governor, sig *engine.Signals) {
	g.mu.Lock()
	if g.jobSignals == nil {
		g.jobSignals = map[*governor]engine.Signals{}
	}
	if sig != nil {
		g.jobSignals[job] = *sig
	} else {
		delete(g.jobSignals, job)
	}
	var union engine.Signals
	for _, s := range g.jobSignals {
		union.Others = union.Others || s.Others
		union.Suffering = union.Suffering || s.Suffering
	}
	g.mu.Unlock()
	g.hear(union.Others, union.Suffering)
}

// neighbourReport is what the controller chose for the copy; nil when
// the depth was given.
func (g *governor) neighbourReport() *NeighbourReport {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.nbFirst == nil {
		return nil
	}
	r := g.nbFirst.Report()
	rep := &NeighbourReport{MinBytes: r.MinBytes, MedianBytes: r.MedianBytes, MaxBytes: r.MaxBytes,
		LeastLatency: r.LeastLatency.Seconds(), SoloRate: r.SoloRate, BestRate: r.BestRate, Keep: r.Keep, HeldSeconds: r.HeldSeconds,
		LowestShare: r.LowestShare, FloorSeconds: r.FloorSeconds, Floor: r.Floor, Samples: r.Samples,
		OthersSeconds: r.OthersSeconds, Restarts: r.Restarts}
	for _, w := range r.Windows {
		rep.Windows = append(rep.Windows, NeighbourWindow{Bytes: w.Bytes, Seconds: w.Seconds})
	}
	return rep
}

// NeighbourReport is what the good neighbour chose during a copy whose
// queue depth nobody gave.
type NeighbourReport struct {
	// MinBytes, MedianBytes and MaxBytes are the bytes its window let in
	// flight, over the copy's time.
	MinBytes, MedianBytes, MaxBytes int64
	// LeastLatency is the least a request took, in seconds.
	LeastLatency float64
	// SoloRate is the copy's speed with every slot while nobody else
	// used its disks, bytes per second; 0 when never measured.
	SoloRate float64
	// BestRate is the most a window moved while others used the disks,
	// bytes per second (0 when they never did), and Keep the share of the
	// solo rate (of BestRate, when less or unmeasured) the window aimed
	// at: 0.75, or 0.5 with --yield.
	BestRate, Keep float64
	// HeldSeconds is the time others used the disks and the copy moved
	// under 90% of its solo speed, not held back by its rate cap (it
	// neither moved the cap nor waited on it); LowestShare the least
	// share of it.
	HeldSeconds, LowestShare float64
	// FloorSeconds is the time the floor (Floor of the solo speed) kept
	// the window from shrinking further.
	FloorSeconds, Floor float64
	// Samples is how many times it looked (four a second): 0 for a copy
	// too short to, which kept every slot.
	Samples int
	// OthersSeconds is the time others used the copy's disks.
	OthersSeconds float64
	// Windows is the time its window held each number of bytes in
	// flight, fewest first; Restarts how many times it grew afresh
	// (others came, a cap was lifted from a copy capped from its start,
	// its best beside them measured again).
	Windows  []NeighbourWindow
	Restarts int
}

// NeighbourWindow is the time a window of Bytes in flight was held.
type NeighbourWindow struct {
	Bytes   int64
	Seconds float64
}

// MarshalJSON: the bytes in flight and the time held, in ms.
func (w NeighbourWindow) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Bytes        int64 `json:"bytes_in_flight"`
		Milliseconds int64 `json:"milliseconds"`
	}{w.Bytes, Milliseconds(w.Seconds)})
}

// String says what it chose, for -v.
func (r *NeighbourReport) String() string {
	s := fmt.Sprintf("in flight %s to %s (median %s), least latency %.2f ms",
		units.Format(r.MinBytes), units.Format(r.MaxBytes), units.Format(r.MedianBytes), r.LeastLatency*1e3)
	if r.SoloRate > 0 {
		s += fmt.Sprintf(", alone %s/s", units.Format(int64(r.SoloRate)))
	}
	if r.OthersSeconds > 0 {
		s += fmt.Sprintf(", others used the disks %.1f s", r.OthersSeconds)
	}
	if r.BestRate > 0 {
		s += fmt.Sprintf(" (beside them at most %s/s; the window aimed at %.0f%% of its speed alone, or of that when less)", units.Format(int64(r.BestRate)), 100*r.Keep)
	}
	if held := r.Held(); held != "" {
		s += "; " + held
	}
	return "good neighbour: " + s
}

// Held says, for the summary, when others held the copy back; "" when
// they did not for a second at least.
func (r *NeighbourReport) Held() string {
	if r == nil || r.HeldSeconds < 1 {
		return ""
	}
	s := fmt.Sprintf("held back %.1f s by others' I/O, down to %.0f%% of its speed alone", r.HeldSeconds, 100*r.LowestShare)
	if r.FloorSeconds > 0 {
		s += fmt.Sprintf(" (its floor of %.0f%% kept it moving %.1f s)", 100*r.Floor, r.FloorSeconds)
	}
	return s
}

// MarshalJSON: bytes in flight as integers, times in ms, the least
// latency in µs, shares from 0 to 1.
func (r NeighbourReport) MarshalJSON() ([]byte, error) {
	windows := r.Windows
	if windows == nil {
		windows = []NeighbourWindow{}
	}
	return json.Marshal(struct {
		MinBytes          int64             `json:"min_bytes_in_flight"`
		MedianBytes       int64             `json:"median_bytes_in_flight"`
		MaxBytes          int64             `json:"max_bytes_in_flight"`
		LeastLatency      int64             `json:"least_latency_microseconds"`
		SoloRate          int64             `json:"solo_rate"`
		BestRate          int64             `json:"best_rate"`
		Keep              float64           `json:"keep"`
		HeldMilliseconds  int64             `json:"held_milliseconds"`
		LowestShare       float64           `json:"lowest_share"`
		FloorMilliseconds int64             `json:"floor_milliseconds"`
		Floor             float64           `json:"floor"`
		Samples           int               `json:"samples"`
		OthersMillis      int64             `json:"others_milliseconds"`
		Windows           []NeighbourWindow `json:"windows"`
		Restarts          int               `json:"restarts"`
	}{r.MinBytes, r.MedianBytes, r.MaxBytes, int64(math.Round(r.LeastLatency * 1e6)), int64(math.Round(r.SoloRate)),
		int64(math.Round(r.BestRate)), round3(r.Keep),
		Milliseconds(r.HeldSeconds), round3(r.LowestShare), Milliseconds(r.FloorSeconds), r.Floor, r.Samples,
		Milliseconds(r.OthersSeconds), windows, r.Restarts})
}
