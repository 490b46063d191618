package engine

import (
	"slices"
	"testing"
	"time"
)

// yieldModel is copier's yield controller (copier/yield.go) as the
// neighbour hears it, beside a modelled device: every yieldModelTick it
// takes the wait of a foreground's small read behind the copy's window
// (the upper quartile of the tick's windows, as its probe reads take the
// upper quartile of theirs), and the median of the last three; over twice
// the wait without the copy (plus 50 µs), others suffer. Then it halves
// the rate (what the copy moved in the tick, or the cut's), holds two
// ticks, and raises it by a sixteenth of the copy's own rate a tick until
// that is reached and the cut lifted; a cut that did not bring the wait
// down by a fifth is not followed by another. The neighbour hears the
// cut as Signals.Cap and the suffering as Signals.Suffering. The depth
// cut is left out: the windows here are of one or two requests.
type yieldModel struct {
	sample func(w int) Sample
	fgWait func(w int) time.Duration
	base   time.Duration // a small read's wait without the copy

	rate, own float64
	hold      int
	cutWait   time.Duration
	recent    []time.Duration
	windows   []int
	moved     int64
	elapsed   time.Duration
	suffering bool
	cuts      int
}

const yieldModelTick = 250 * time.Millisecond

func (y *yieldModel) signals() Signals {
	return Signals{Others: true, Suffering: y.suffering, Cap: y.rate}
}

// step feeds the neighbour one sample at its window under the cut, and
// runs the yield controller at the end of each tick.
func (y *yieldModel) step(n *Neighbour) Sample {
	w := n.Bytes()
	s := y.sample(w)
	if y.rate > 0 {
		if most := int64(y.rate * s.Elapsed.Seconds()); s.Bytes > most {
			s.Paced = time.Duration(float64(s.Elapsed) * (1 - float64(most)/float64(s.Bytes)))
			s.Bytes = most
		}
	}
	n.Step(s, y.signals())
	y.windows = append(y.windows, w)
	y.moved += s.Bytes
	y.elapsed += s.Elapsed
	if y.elapsed >= yieldModelTick {
		y.tick()
	}
	return s
}

func (y *yieldModel) tick() {
	slices.Sort(y.windows)
	probe := y.base + y.fgWait(y.windows[len(y.windows)*3/4])
	moved := float64(y.moved) / y.elapsed.Seconds()
	y.windows, y.moved, y.elapsed = y.windows[:0], 0, 0
	y.recent = append(y.recent, probe)
	if len(y.recent) > 3 {
		y.recent = y.recent[1:]
	}
	sorted := slices.Sorted(slices.Values(y.recent))
	probe = sorted[len(sorted)/2]
	if y.rate == 0 && moved > y.own {
		y.own = moved
	}
	floor := max(y.own/32, 1<<20)
	y.suffering = probe > 2*y.base+50*time.Microsecond
	switch {
	case y.hold > 0:
		y.hold--
	case y.suffering:
		if y.cutWait > 0 && probe > y.cutWait*4/5 {
			break // futile
		}
		now := y.rate
		if now == 0 {
			now = moved
		}
		y.rate, y.hold, y.cutWait = max(now/2, floor), 2, probe
		y.cuts++
	case y.rate > 0:
		y.cutWait = 0
		y.rate += max(y.own, floor) / 16
		if y.rate >= y.own {
			y.rate = 0
		}
	default:
		y.cutWait = 0
	}
}

// TestNeighbourYieldCuts: a copy with --yield, never alone (the
// foreground was there before it, as in the busy bench), on a device
// like this VM's disk (and one whose samples are 20% off either way),
// with the yield controller cutting its rate whenever a foreground's
// small read waits over twice as long as without the copy. The least
// window that moves its share of the best beside others keeps the
// foreground under that, and the cuts must not take the copy from
// there: over 20 s, no cut starts a growth afresh, windows at which the
// foreground suffers hold under 10% of the time (what is left is the
// growth that finds the best, which the cuts pause and it resumes), and
// the copy moves at least 90% of what that window does. Before, each
// raise of the cut by more than neighbourUncap, and its lift, started a
// growth afresh from the window the cut had stepped down to, with no
// best to aim at: it grew past the foreground's threshold until the
// next cut, 8 cuts and 9 or 10 growths afresh in 20 s, and windows that
// made the foreground suffer held 20% and 23% of the time.
func TestNeighbourYieldCuts(t *testing.T) {
	for _, c := range []struct {
		name  string
		noise float64
	}{{"steady", 0}, {"noisy", 0.2}} {
		t.Run(c.name, func(t *testing.T) {
			d := vdaLike()
			d.noise = c.noise
			y := &yieldModel{sample: d.sample, fgWait: d.fgWait, base: 180 * time.Microsecond}
			n := NewNeighbour(8, 1<<20, 4096) // --yield's blocks are a MiB
			n.SetKeep(NeighbourYieldKeep)
			n.Hear(y.signals())
			for range samplesIn(2 * time.Second) {
				y.step(n)
			}
			want := n.bytesAt(leastLevel(n, d, NeighbourYieldKeep*d.thr(8<<20)))
			hurts := int((y.base + 50*time.Microsecond).Seconds() * d.bw) // a read waits over twice its base behind more
			restarts, cuts := n.Report().Restarts, y.cuts
			var moved int64
			var took time.Duration
			over, samples := 0, samplesIn(20*time.Second)
			for range samples {
				if n.Bytes() > hurts {
					over++
				}
				s := y.step(n)
				moved += s.Bytes
				took += s.Elapsed
			}
			r := n.Report()
			if thr := float64(moved) / took.Seconds(); r.Restarts > restarts || 100*over > 10*samples || thr < 0.9*d.thr(want) {
				t.Errorf("windows over %d bytes (a foreground read waits over twice its own) %d of %d samples, want under 10%%; moved %.0f B/s, want %.0f at least (90%% of what %d bytes move); %d cuts, %d growths afresh (want none), windows %v",
					hurts, over, samples, thr, 0.9*d.thr(want), want, y.cuts-cuts, r.Restarts-restarts, r.Windows)
			}
		})
	}
}
