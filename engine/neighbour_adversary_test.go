package engine

import (
	"testing"
	"time"
)

// TestNeighbourLevelsUnit: every window's request is a multiple of the
// unit, or a whole block, whatever the unit: the caller's block size
// (copier gives it as the unit, so that only the depth changes) may be
// larger than a MiB or not a power of two. Before, the window of one
// request was a MiB whatever the unit: --block-size 4M beside others
// sent 1 MiB requests.
func TestNeighbourLevelsUnit(t *testing.T) {
	for _, c := range [][3]int{{3, 4 << 20, 4 << 20}, {4, 3 << 20, 3 << 20}, {4, 8 << 20, 12288}, {2, 100000, 3000}, {8, 1 << 20, 2 << 20}, {1, 64 << 10, 4096}} {
		slots, block, unit := c[0], c[1], c[2]
		n := NewNeighbour(slots, block, unit)
		for i, l := range n.levels {
			if l.Request != 0 && l.Request%unit != 0 {
				t.Errorf("%d slots of %d, unit %d: level %d %+v is not a multiple of the unit", slots, block, unit, i, l)
			}
		}
	}
}

// TestNeighbourSoloBurst: a copy's first judgement alone is a burst ten
// times its real speed (a host's cache taking the first writes), then
// it runs alone at its real speed for 2 s, then others come: its speed
// alone is what it moves alone, not the burst, and beside them it does
// not keep every slot for a floor of half the burst it can never reach.
// Before, the solo speed was the most any smoothed judgement alone had
// moved: the burst's, for good.
func TestNeighbourSoloBurst(t *testing.T) {
	d := vdaLike()
	d.other = 0
	n := NewNeighbour(8, 8<<20, 4096)
	s := d.sample(n.Bytes())
	s.Bytes *= 10
	for range 4 {
		n.Step(s, Signals{})
	}
	steps(n, d, Signals{}, samplesIn(2*time.Second))
	real := d.thr(n.Bytes())
	if solo := n.Report().SoloRate; solo > 1.2*real {
		t.Errorf("solo %.0f B/s after 2 s alone at %.0f", solo, real)
	}
	d.other = 16 << 10
	sig := Signals{Others: true}
	n.Hear(sig)
	steps(n, d, sig, samplesIn(settleTime))
	want := n.bytesAt(leastLevel(n, d, NeighbourKeep*real))
	if w := steps(n, d, sig, samplesIn(2*time.Second)); w > 2*want {
		t.Errorf("beside others: mean window %d bytes, want about %d (the least that moves %.2f of %.0f)", w, want, NeighbourKeep, real)
	}
}

// TestNeighbourCapLifted: a copy never alone, under a rate cap beside
// others, whose cap is lifted (Plan.SetMaxRate(0)): what the cap let it
// move is no longer the most it can, and within a second it moves its
// share of what it moves beside them uncapped. Before, it held the small
// window that carried the cap until the best was measured again, 400
// judgements (20 s at least) later, at 37% of what it could move.
func TestNeighbourCapLifted(t *testing.T) {
	const capRate = 20 << 20
	d := vdaLike()
	n := NewNeighbour(8, 8<<20, 4096)
	sig := Signals{Others: true, Cap: capRate}
	n.Hear(sig)
	for range samplesIn(2 * time.Second) {
		s := d.sample(n.Bytes())
		s.Bytes = min(s.Bytes, int64(capRate*NeighbourEvery.Seconds()))
		n.Step(s, sig)
	}
	sig.Cap = 0
	steps(n, d, sig, samplesIn(time.Second))
	best := d.thr(8 * (8 << 20))
	if thr := d.thr(steps(n, d, sig, samplesIn(time.Second))); thr < 0.9*NeighbourKeep*best {
		t.Errorf("cap lifted: %.0f B/s (window %d), want %.2f of the %.0f it moves beside others", thr, n.Bytes(), NeighbourKeep, best)
	}
}
