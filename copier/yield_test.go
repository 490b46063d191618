package copier

import (
	"testing"
	"time"
)

const tick = yieldTick

// alone is a tick with nobody else on the disk: the copy moved 250 MiB
// (1 GiB/s), its probe reads took 0.1 ms, PSI "some" was its own 60%.
func alone() yieldSample {
	return yieldSample{dt: tick, moved: 256 << 20, probe: 100 * time.Microsecond, some: 0.6, full: 0.5}
}

// busy is a tick with a foreground reader that suffers: 5000 requests/s
// by others, probe reads at 2 ms.
func busy() yieldSample {
	s := alone()
	s.moved, s.others, s.probe = 64<<20, 5000, 2*time.Millisecond
	return s
}

// TestAIMDAlone: with nobody else on the disk the copy is never cut,
// however slow the probe (its own requests queue ahead of it) and however
// high PSI (its own waits).
func TestAIMDAlone(t *testing.T) {
	a := newAIMD(8)
	for range 40 {
		s := alone()
		s.probe, s.some = 50*time.Millisecond, 0.99
		if rate, depth := a.step(s); rate != 0 || depth != 8 {
			t.Fatalf("alone: cut to rate %v, depth %d", rate, depth)
		}
	}
	if a.rep.Cuts != 0 || a.rep.CutSeconds != 0 {
		t.Errorf("report %+v", a.rep)
	}
}

// TestAIMDCutsAndRaises: others that suffer halve depth and rate, once
// per hold; when they stop suffering the cut shrinks one slot and a
// sixteenth of the copy's own rate per tick until it is gone; the rate
// never drops below its floor.
func TestAIMDCutsAndRaises(t *testing.T) {
	a := newAIMD(8)
	for range 4 {
		a.step(alone()) // learns 1 GiB/s, probe base 0.1 ms, its own 60% PSI
	}
	rate, depth := a.step(busy())
	if depth != 4 || rate != float64(128<<20) {
		t.Fatalf("first cut: rate %v, depth %d; want 128 MiB/s (half of what moved), 4", rate, depth)
	}
	for range yieldHold {
		if r, d := a.step(busy()); r != rate || d != depth {
			t.Fatalf("cut again within the hold: %v, %d", r, d)
		}
	}
	if rate, depth = a.step(busy()); depth != 2 || rate != float64(64<<20) {
		t.Fatalf("second cut: rate %v, depth %d", rate, depth)
	}
	for range 40 {
		rate, depth = a.step(busy())
	}
	if depth != 1 || rate != float64(32<<20) { // the floor: 1 GiB/s / 32
		t.Fatalf("cut to the bottom: rate %v, depth %d; want the floor 32 MiB/s, 1", rate, depth)
	}
	prevRate, prevDepth := rate, depth
	ticks := 0
	for rate != 0 || depth != 8 {
		s := alone()
		s.others = 5000 // still there, no longer suffering
		rate, depth = a.step(s)
		ticks++
		if rate != 0 && (rate-prevRate > float64(1<<30)/yieldSteps+1 || depth > prevDepth+1) {
			t.Fatalf("raised from %v, %d to %v, %d in one tick: not additive", prevRate, prevDepth, rate, depth)
		}
		prevRate, prevDepth = rate, depth
		if ticks > 100 {
			t.Fatal("never raised back")
		}
	}
	if a.rep.Cuts < 3 || a.rep.Raises < ticks-yieldHold || a.rep.LowestDepth != 1 || a.rep.LowestRate != 32<<20 {
		t.Errorf("report %+v after %d ticks back", a.rep, ticks)
	}
}

// TestAIMDPSI: without probes, a PSI share well above what the copy
// causes alone is suffering; one near it is not.
func TestAIMDPSI(t *testing.T) {
	a := newAIMD(8)
	for range 4 {
		s := alone()
		s.probe = 0
		a.step(s)
	}
	s := alone()
	s.probe, s.others, s.some = 0, 100, 0.7
	if _, depth := a.step(s); depth != 8 {
		t.Fatalf("cut at PSI 70%% against its own 60%%")
	}
	s.some = 0.95
	if _, depth := a.step(s); depth != 4 {
		t.Fatalf("no cut at PSI 95%% against its own 60%%")
	}
}

// TestAIMDFewOthers: a handful of requests by others (a log writer) is
// nobody to yield to.
func TestAIMDFewOthers(t *testing.T) {
	a := newAIMD(8)
	a.step(alone())
	s := busy()
	s.others = yieldOthers - 1
	if _, depth := a.step(s); depth != 8 {
		t.Fatal("cut for fewer than yieldOthers requests per second")
	}
}

func TestParsePSI(t *testing.T) {
	got := parsePSI("some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=789\n")
	if got != [2]int64{123456, 789} {
		t.Errorf("%v", got)
	}
	if got := parsePSI("garbage"); got != [2]int64{-1, -1} {
		t.Errorf("%v", got)
	}
}
