package engine

import (
	"testing"
	"time"
)

// kneeDevice is a modelled device: a request waits max(knee, queued)/bw,
// where queued is every byte in flight (the copy's and another load's),
// so that the copy's throughput grows with its window up to the knee and
// only its latency grows beyond.
type kneeDevice struct {
	bw, knee float64
	other    float64 // another load's bytes in flight
	started  bool
}

// sample is what a copy with w bytes in flight measures in 250 ms. The
// first, of a copy just started, saw a request sent alone.
func (d *kneeDevice) sample(w int) Sample {
	lat := time.Duration(max(d.knee, float64(w)+d.other) / d.bw * float64(time.Second))
	thr := float64(w) / lat.Seconds()
	least := lat
	if !d.started {
		d.started = true
		least = time.Duration(max(d.knee, d.other) / d.bw * float64(time.Second))
	}
	return Sample{Elapsed: SampleEvery, Requests: 100, Latency: lat, Least: least,
		Bytes: int64(thr * SampleEvery.Seconds())}
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

// TestNeighbourKnee: alone, the window comes down from every slot and
// settles around the knee (full
// speed, no standing queue); another load makes it shrink; a heavier one
// finds it held at the floor of its solo speed; gone, it grows back.
func TestNeighbourKnee(t *testing.T) {
	const block, knee = 8 << 20, 6 << 20
	d := &kneeDevice{bw: 1 << 30, knee: knee}
	n := NewNeighbour(8, block, 4096)
	steps(n, d, Signals{}, 20) // from every slot down to the knee
	if w := steps(n, d, Signals{}, 20); w < knee*3/4 || w > 2*knee {
		t.Fatalf("alone: mean window %d, want about the knee %d", w, knee)
	}
	solo := n.Report().SoloRate
	if solo < 0.85*d.bw {
		t.Fatalf("alone: solo rate %.0f, want about %.0f", solo, d.bw)
	}
	d.other = knee
	before := n.Bytes()
	if w := steps(n, d, Signals{Others: true}, 20); w >= before {
		t.Errorf("another load: window %d, was %d: want smaller", w, before)
	}
	d.other = 4 * knee // the copy's share at its knee window is under the floor
	steps(n, d, Signals{Others: true}, 30)
	s := d.sample(n.Bytes())
	if thr := float64(s.Bytes) / s.Elapsed.Seconds(); thr < 0.9*neighbourFloor*solo {
		t.Errorf("a heavy load: %.0f B/s, under the floor of %.0f", thr, neighbourFloor*solo)
	}
	if r := n.Report(); r.HeldSeconds == 0 || r.FloorSeconds == 0 {
		t.Errorf("report %+v: held back and floor not said", r)
	}
	d.other = 0
	steps(n, d, Signals{}, 20)
	if w := steps(n, d, Signals{}, 20); w < knee*3/4 || w > 2*knee {
		t.Errorf("load gone: mean window %d, want back near the knee %d", w, knee)
	}
	r := n.Report()
	if r.MinBytes >= r.MaxBytes || r.MedianBytes < r.MinBytes || r.MedianBytes > r.MaxBytes || r.LeastLatency == 0 {
		t.Errorf("report %+v", r)
	}
}

// TestNeighbourCapped: under a rate cap the throughput does not grow with
// the window, so the window stays small, and the floor never asks for
// more than the cap.
func TestNeighbourCapped(t *testing.T) {
	const block = 1 << 20
	n := NewNeighbour(64, block, 4096)
	capped := func(w int) Sample {
		s := (&kneeDevice{bw: 1 << 30, knee: 4 << 20, started: true}).sample(w)
		s.Bytes = min(s.Bytes, int64(100<<20*SampleEvery.Seconds()))
		return s
	}
	for range 60 {
		n.Step(capped(n.Bytes()), Signals{Cap: 100 << 20})
	}
	if w := n.Bytes(); w > 2<<20 {
		t.Errorf("capped at 100 MiB/s: window %d, want small", w)
	}
	if r := n.Report(); r.FloorSeconds > 0 {
		t.Errorf("capped: the floor held %.1f s", r.FloorSeconds)
	}
}

// TestNeighbourSuffering: others suffering shrink the window even when
// the copy's own latency does not show it.
func TestNeighbourSuffering(t *testing.T) {
	d := &kneeDevice{bw: 1 << 30, knee: 32 << 20}
	n := NewNeighbour(8, 8<<20, 4096)
	steps(n, d, Signals{}, 30)
	before := n.Bytes()
	for range 4 {
		n.Step(d.sample(n.Bytes()), Signals{Others: true, Suffering: true})
	}
	if n.Bytes() >= before {
		t.Errorf("others suffering: window %d, was %d", n.Bytes(), before)
	}
}

// TestNeighbourWindow: the windows it chooses from: two requests from
// 64 KiB doubling to two blocks, then a block more at a time up to every
// slot, more bytes each; it starts at the most.
func TestNeighbourWindow(t *testing.T) {
	for _, c := range []struct {
		slots, block int
		first, last  Window
		count        int
	}{
		{8, 8 << 20, Window{Depth: 2, Request: 64 << 10}, Window{Depth: 8}, 7 + 7},
		{1, 1 << 20, Window{Depth: 1, Request: 64 << 10}, Window{Depth: 1}, 4 + 1},
		{4, 64 << 10, Window{Depth: 2}, Window{Depth: 4}, 3},
		{4, 1 << 20, Window{Depth: 2}, Window{Depth: 4}, 3}, // unit 1 MiB: no smaller request
	} {
		unit := 4096
		if c.block == 1<<20 && c.slots == 4 {
			unit = 1 << 20
		}
		n := NewNeighbour(c.slots, c.block, unit)
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

// TestNeighbourNeverAlone: others used the disk from the copy's start,
// so it never moved alone: the floor is half the best it moved, and a
// load that only grows never takes it below.
func TestNeighbourNeverAlone(t *testing.T) {
	const knee = 6 << 20
	d := &kneeDevice{bw: 1 << 30, knee: knee, other: knee}
	n := NewNeighbour(8, 8<<20, 4096)
	steps(n, d, Signals{Others: true}, 20)
	first := d.sample(n.Bytes())
	best := float64(first.Bytes) / first.Elapsed.Seconds() // about what it moved at best
	d.other = 8 * knee
	steps(n, d, Signals{Others: true}, 40)
	s := d.sample(n.Bytes())
	if thr := float64(s.Bytes) / s.Elapsed.Seconds(); thr < 0.8*neighbourFloor*best {
		t.Errorf("never alone: %.0f B/s under a heavier load, the best was %.0f", thr, best)
	}
}
