package engine

import (
	"math/rand/v2"
	"testing"
	"time"
)

// kneeDevice is a modelled device that serves one request at a time, in
// order: a request waits for every byte queued before it, so that its
// latency is fixed + max(knee, queued)/bw, where queued is every byte in
// flight (the copy's and another load's). The copy's throughput grows
// with its window up to the knee, only its latency beyond; with a fixed
// time per request (and no knee) it grows ever less with each byte more,
// as on this VM's virtio disk, where one request of a MiB moves about the
// copy's speed alone and one of 256 KiB two thirds of it. A foreground's
// small read waits behind the copy's bytes in flight (fgWait). noise,
// when set, makes each sample's throughput up to that share off, as on a
// shared machine.
type kneeDevice struct {
	bw, knee float64
	fixed    time.Duration
	other    float64 // another load's bytes in flight
	noise    float64
	rnd      *rand.Rand
}

// sample is what a copy with w bytes in flight measures in one sample.
func (d *kneeDevice) sample(w int) Sample {
	lat := d.fixed + time.Duration(max(d.knee, float64(w)+d.other)/d.bw*float64(time.Second))
	thr := float64(w) / lat.Seconds()
	if d.noise > 0 {
		if d.rnd == nil {
			d.rnd = rand.New(rand.NewPCG(27, 1))
		}
		thr *= 1 + d.noise*(2*d.rnd.Float64()-1)
	}
	least := d.fixed + time.Duration(max(d.knee, d.other)/d.bw*float64(time.Second))
	return Sample{Elapsed: NeighbourEvery, Requests: 100, Latency: lat, Least: least,
		Bytes: int64(thr * NeighbourEvery.Seconds())}
}

// thr is the copy's throughput at w bytes in flight, without noise.
func (d *kneeDevice) thr(w int) float64 {
	return float64(w) / (d.fixed.Seconds() + max(d.knee, float64(w)+d.other)/d.bw)
}

// fgWait is how long a foreground read waits behind the copy's window.
func (d *kneeDevice) fgWait(w int) time.Duration {
	return time.Duration(float64(w) / d.bw * float64(time.Second))
}

// steps feeds the controller samples of the device, and returns the
// mean window over them.
func steps(n *Neighbour, d *kneeDevice, sig Signals, samples int) int {
	sum := 0
	for range samples {
		n.Step(d.sample(n.Bytes()), sig)
		sum += n.Bytes()
	}
	return sum / samples
}

// settleTime: beside others, a copy of a few seconds must settle within
// a few hundred milliseconds.
const settleTime = 600 * time.Millisecond

func samplesIn(d time.Duration) int { return int(d / NeighbourEvery) }

// TestNeighbourBesideOthers: others on the disk from the copy's start:
// it never sends every slot, and within settleTime holds the least
// window that keeps its share of the best it moves there (about the
// knee's share: full speed needs the knee), so that the foreground waits
// behind that, not behind every slot. With --yield's share, a smaller
// window. A model whose samples are 20% off either way holds near it too.
func TestNeighbourBesideOthers(t *testing.T) {
	const block, knee = 8 << 20, 4 << 20
	for _, c := range []struct {
		name  string
		keep  float64
		noise float64
	}{{"default", NeighbourKeep, 0}, {"yield", NeighbourYieldKeep, 0}, {"noisy", NeighbourKeep, 0.2}} {
		t.Run(c.name, func(t *testing.T) {
			d := &kneeDevice{bw: 1 << 30, knee: knee, other: 16 << 10, noise: c.noise}
			n := NewNeighbour(8, block, 4096)
			n.SetKeep(c.keep)
			sig := Signals{Others: true}
			if w := n.Hear(sig); n.Bytes() > 1<<20 {
				t.Fatalf("others before the copy: starts with %+v (%d bytes)", w, n.Bytes())
			}
			most := 0
			for range samplesIn(settleTime) {
				n.Step(d.sample(n.Bytes()), sig)
				most = max(most, n.Bytes())
			}
			if most > 4*knee {
				t.Errorf("growing: up to %d bytes in flight, want no more than twice past the knee %d", most, knee)
			}
			w := steps(n, d, sig, 40)
			best, slack := d.thr(8*block), 2 // a window half as large would not keep the share
			if c.noise > 0 {
				slack = 4 // nor one a quarter as large
			}
			if thr := d.thr(w); thr < 0.85*c.keep*best || d.thr(w/slack) >= c.keep*best {
				t.Errorf("settled: mean window %d moves %.0f, want the least that keeps %.2f of the best %.0f", w, thr, c.keep, best)
			}
			if wait, every := d.fgWait(w), d.fgWait(8*block); wait > every/8 {
				t.Errorf("a foreground read waits %v behind the window, %v behind every slot: want far less", wait, every)
			}
		})
	}
}

// TestNeighbourAloneThenOthers: alone, every slot (full speed, as
// before); others come: it comes down at once and settles; they go:
// every slot again.
func TestNeighbourAloneThenOthers(t *testing.T) {
	const block, knee = 8 << 20, 4 << 20
	d := &kneeDevice{bw: 1 << 30, knee: knee}
	n := NewNeighbour(8, block, 4096)
	if w := steps(n, d, Signals{}, 20); w != 8*block {
		t.Fatalf("alone: mean window %d, want every slot %d", w, 8*block)
	}
	if solo := n.Report().SoloRate; solo < 0.95*d.bw || solo > 1.05*d.bw {
		t.Errorf("alone: solo rate %.0f, want %.0f", solo, d.bw)
	}
	d.other = 16 << 10
	n.Hear(Signals{Others: true})
	if n.Bytes() > 2<<20 {
		t.Errorf("others came: %d bytes in flight at once, want a MiB at most", n.Bytes())
	}
	steps(n, d, Signals{Others: true}, samplesIn(settleTime))
	if w := steps(n, d, Signals{Others: true}, 20); w > 2*knee {
		t.Errorf("beside others: mean window %d, want no more than twice the knee %d", w, knee)
	}
	d.other = 0
	if w := n.Hear(Signals{}); n.Bytes() != 8*block {
		t.Errorf("others gone: window %+v, want every slot", w)
	}
	r := n.Report()
	if r.OthersSeconds == 0 || r.BestRate == 0 || r.MinBytes >= r.MaxBytes || r.MedianBytes < r.MinBytes || r.LeastLatency == 0 || r.Keep != NeighbourKeep {
		t.Errorf("report %+v", r)
	}
}

// TestNeighbourFloor: a load that grows heavy beside the copy takes its
// share of the disk, but never the copy below its floor of its speed
// alone: the window grows for it.
func TestNeighbourFloor(t *testing.T) {
	const block, knee = 8 << 20, 4 << 20
	d := &kneeDevice{bw: 1 << 30, knee: knee}
	n := NewNeighbour(8, block, 4096)
	steps(n, d, Signals{}, 20)
	solo := n.Report().SoloRate
	d.other = 32 << 20 // a heavy load: at the window it chose, far under the floor
	steps(n, d, Signals{Others: true}, samplesIn(2*time.Second))
	if thr := d.thr(n.Bytes()); thr < 0.9*neighbourFloor*solo {
		t.Errorf("a heavy load: %.0f B/s, under the floor of %.0f", thr, neighbourFloor*solo)
	}
	if r := n.Report(); r.HeldSeconds == 0 || r.FloorSeconds == 0 {
		t.Errorf("report %+v: held back and floor not said", r)
	}
}

// TestNeighbourNeverAlone: others from the copy's start and a load that
// only grows: the floor is half the best it moved, never given up, once
// a window it held sustained it (neighbourSustain: a best judged over a
// few tenths of a second may be a burst of the host's cache, which no
// window moves; TestNeighbourBursts).
func TestNeighbourNeverAlone(t *testing.T) {
	const knee = 4 << 20
	d := &kneeDevice{bw: 1 << 30, knee: knee, other: 16 << 10}
	n := NewNeighbour(8, 8<<20, 4096)
	steps(n, d, Signals{Others: true}, samplesIn(2*time.Second))
	best := n.Report().BestRate
	d.other = 64 << 20
	steps(n, d, Signals{Others: true}, samplesIn(3*time.Second))
	if thr := d.thr(n.Bytes()); thr < 0.8*neighbourFloor*best {
		t.Errorf("never alone: %.0f B/s under a heavier load, the best was %.0f", thr, best)
	}
}

// TestNeighbourCapped: under a rate cap the throughput does not grow
// with the window, so the window stays small, and the floor never asks
// for more than the cap.
func TestNeighbourCapped(t *testing.T) {
	const block = 1 << 20
	const capRate = 100 << 20
	n := NewNeighbour(64, block, 4096)
	d := &kneeDevice{bw: 1 << 30, knee: 4 << 20}
	sig := Signals{Others: true, Cap: capRate}
	for range 60 {
		s := d.sample(n.Bytes())
		s.Bytes = min(s.Bytes, int64(capRate*NeighbourEvery.Seconds()))
		n.Step(s, sig)
	}
	if w := n.Bytes(); w > 2<<20 {
		t.Errorf("capped at 100 MiB/s: window %d, want small", w)
	}
	if r := n.Report(); r.FloorSeconds > 0.2 {
		t.Errorf("capped: the floor held %.1f s", r.FloorSeconds)
	}
}

// TestNeighbourWindow: the windows it chooses from: one request from
// 128 KiB growing by half-steps to a MiB (to a block with one slot),
// then two requests growing to whole blocks, then a block more at a time
// up to every slot, more bytes each; it starts with every slot.
func TestNeighbourWindow(t *testing.T) {
	for _, c := range []struct {
		slots, block, unit int
		first, last        Window
		count              int
	}{
		{8, 8 << 20, 4096, Window{Depth: 1, Request: 128 << 10}, Window{Depth: 8}, 7 + 4 + 6},
		{1, 1 << 20, 4096, Window{Depth: 1, Request: 128 << 10}, Window{Depth: 1}, 7},
		{4, 64 << 10, 4096, Window{Depth: 1}, Window{Depth: 4}, 4},
		{4, 1 << 20, 1 << 20, Window{Depth: 1}, Window{Depth: 4}, 4}, // unit 1 MiB: no smaller request
	} {
		n := NewNeighbour(c.slots, c.block, c.unit)
		if len(n.levels) != c.count || n.levels[0] != c.first || n.Window() != c.last {
			t.Errorf("%d slots of %d: levels %+v", c.slots, c.block, n.levels)
			continue
		}
		for i := 1; i < len(n.levels); i++ {
			if n.bytesAt(i) <= n.bytesAt(i-1) {
				t.Errorf("%d slots of %d: level %d %+v no larger than the one before", c.slots, c.block, i, n.levels[i])
			}
		}
	}
}

// TestNeighbourCapNeedsWindow: beside others, under a cap that the
// smallest windows cannot carry (on a slow disk a request of 128 KiB
// moves a fraction of it), the controller does not step down to a window
// that no longer carries the cap and stay there: it keeps at least its
// share of what the cap let it move. Before, each capped judgement took
// a step down, and once under the cap it had no best to judge against
// nor a floor: ringcp --max-rate 30M beside fio ran at 14 MiB/s, where
// -q 8 ran at 26, and said nothing of being held back.
func TestNeighbourCapNeedsWindow(t *testing.T) {
	const capRate = 30 << 20
	d := &kneeDevice{bw: 64 << 20, knee: 2 << 20, other: 1 << 20}
	n := NewNeighbour(8, 8<<20, 4096)
	sig := Signals{Others: true, Cap: capRate}
	capped := func() float64 { return min(d.thr(n.Bytes()), capRate) }
	for range samplesIn(time.Second) {
		s := d.sample(n.Bytes())
		s.Bytes = min(s.Bytes, int64(capRate*NeighbourEvery.Seconds()))
		n.Step(s, sig)
	}
	var sum float64
	const late = 120
	for range late {
		s := d.sample(n.Bytes())
		s.Bytes = min(s.Bytes, int64(capRate*NeighbourEvery.Seconds()))
		n.Step(s, sig)
		sum += capped()
	}
	if mean, want := sum/late, 0.9*NeighbourKeep*capRate; mean < want {
		t.Errorf("capped at %d B/s beside others: %.0f B/s on average (window now %d bytes), want %.0f at least", capRate, mean, n.Bytes(), want)
	}
}

// TestNeighbourFewRequests: on a slow disk a sample holds fewer requests
// than one judgement needs (8 MiB requests at 60 MB/s: one every 130 ms,
// samples every 25 ms), so samples are judged together, not dropped:
// alone it learns its solo speed, and beside others it grows from where
// the others made it start. Before, every such sample was dropped:
// ringcp alone on a 60 MB/s loop device reported no solo speed and no
// latency after 41 samples, and beside others the window stayed where
// it started, with no floor.
func TestNeighbourFewRequests(t *testing.T) {
	const bw = 60 << 20
	n := NewNeighbour(8, 8<<20, 4096)
	sample := func(i int) Sample {
		s := Sample{Elapsed: NeighbourEvery}
		if i%2 == 0 {
			s.Requests, s.Least = 1, 100*time.Millisecond
		}
		s.Bytes = int64(bw * NeighbourEvery.Seconds())
		return s
	}
	for i := range samplesIn(time.Second) {
		n.Step(sample(i), Signals{})
	}
	if r := n.Report(); r.SoloRate < bw/2 || r.LeastLatency == 0 {
		t.Errorf("alone, a request every other sample: solo %.0f B/s, least latency %v; want about %d B/s and a latency", r.SoloRate, r.LeastLatency, bw)
	}
	n.Hear(Signals{Others: true})
	start := n.Bytes()
	for i := range samplesIn(time.Second) {
		s := sample(i)
		s.Bytes = s.Bytes * int64(n.Bytes()) / (2 * int64(start)) // more window moves more, up to twice the start
		n.Step(s, Signals{Others: true})
	}
	if n.Bytes() <= start {
		t.Errorf("beside others, a request every other sample: window %d, never grew from %d", n.Bytes(), start)
	}
}
