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
	s.others, s.probe = 5000, 2*time.Millisecond
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

// contended is a tick beside a foreground whose reads wait behind the
// copy: the probe grows with the copy's depth and rate (0.1 ms alone, 2 ms
// at full depth and rate), and the copy moves what its rate lets through.
func contended(rate float64, depth int) yieldSample {
	if rate == 0 {
		rate = 1 << 30
	}
	load := rate / (1 << 30) * float64(depth) / 8
	s := alone()
	s.others = 5000
	s.moved = int64(rate * tick.Seconds())
	s.probe = 100*time.Microsecond + time.Duration(load*float64(1900*time.Microsecond))
	return s
}

// TestAIMDCutsAndRaises: a foreground that suffers for more than a tick
// halves depth and rate, once per hold, while that brings its wait down;
// where it no longer suffers, the cut shrinks by one slot and a sixteenth
// of the copy's own rate per tick until it is gone.
func TestAIMDCutsAndRaises(t *testing.T) {
	a := newAIMD(8)
	for range 4 {
		a.step(alone()) // learns 1 GiB/s, probe base 0.1 ms, its own 60% PSI
	}
	// One slow tick is not enough (the probe is a median of ticks).
	rate, depth := a.step(contended(0, 8))
	if depth != 8 || rate != 0 {
		t.Fatalf("cut after one slow tick: rate %v, depth %d", rate, depth)
	}
	rate, depth = a.step(contended(0, 8))
	if depth != 4 || rate != float64(512<<20) {
		t.Fatalf("first cut: rate %v, depth %d; want 512 MiB/s (half of what moved), 4", rate, depth)
	}
	for range yieldHold {
		if r, d := a.step(contended(rate, depth)); r != rate || d != depth {
			t.Fatalf("cut again within the hold: %v, %d", r, d)
		}
	}
	for range 40 {
		rate, depth = a.step(contended(rate, depth))
	}
	if s := contended(rate, depth); a.suffering(s) || a.rep.Cuts < 2 {
		t.Fatalf("after 40 ticks at rate %v, depth %d the foreground still waits %v (base %v); %+v", rate, depth, a.probe, a.base, a.rep)
	}
	if rate == 0 || depth == 8 {
		t.Fatalf("the cut is gone (rate %v, depth %d) beside a foreground that suffers at full speed", rate, depth)
	}
	// The foreground leaves: additive steps back to no cut.
	prevRate, prevDepth, ticks := rate, depth, 0
	for rate != 0 || depth != 8 {
		rate, depth = a.step(alone())
		ticks++
		if rate != 0 && (rate-prevRate > float64(1<<30)/yieldSteps+1 || depth > prevDepth+1) {
			t.Fatalf("raised from %v, %d to %v, %d in one tick: not additive", prevRate, prevDepth, rate, depth)
		}
		prevRate, prevDepth = rate, depth
		if ticks > 100 {
			t.Fatal("never raised back")
		}
	}
	if a.rep.Raises < ticks-yieldHold || a.rep.LowestDepth >= 8 || a.rep.LowestRate <= 0 || a.rep.CutSeconds <= 0 {
		t.Errorf("report %+v after %d ticks back", a.rep, ticks)
	}
}

// TestAIMDFutile: a wait the copy does not cause (it stays whatever the
// copy does) gets one cut, not a spiral down to the floor.
func TestAIMDFutile(t *testing.T) {
	a := newAIMD(8)
	for range 4 {
		a.step(alone())
	}
	stall := func() yieldSample { s := alone(); s.others, s.probe = 5000, 20*time.Millisecond; return s }
	for range 40 {
		a.step(stall())
	}
	if a.rep.Cuts != 1 || a.rep.Futile == 0 || a.depth != 4 {
		t.Fatalf("beside a stall that is not the copy's: %+v, depth %d", a.rep, a.depth)
	}
}

// TestAIMDFloor: however often it is cut, the rate stays at or above
// 1/yieldFloor of the copy's own, and at least 1 MiB/s.
func TestAIMDFloor(t *testing.T) {
	a := newAIMD(8)
	a.step(alone())
	for range 100 {
		a.cut(contended(a.rate, a.depth))
	}
	if a.rate != float64(1<<30)/yieldFloor || a.depth != 1 || a.rep.LowestRate != 1<<30/yieldFloor {
		t.Fatalf("rate %v, depth %d after 100 cuts", a.rate, a.depth)
	}
	slow := newAIMD(8)
	s := alone()
	s.moved = 1 << 20 // 4 MiB/s alone
	slow.step(s)
	for range 100 {
		slow.cut(s)
	}
	if slow.rate != 1<<20 {
		t.Fatalf("a slow copy cut to %v, under 1 MiB/s", slow.rate)
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
// nobody to yield to; a foreground that suffers so much it completes few
// requests is still there.
func TestAIMDFewOthers(t *testing.T) {
	a := newAIMD(8)
	a.step(alone())
	s := busy()
	s.others = yieldOthers - 1
	for range 4 {
		if _, depth := a.step(s); depth != 8 {
			t.Fatal("cut for fewer than yieldOthers requests per second")
		}
	}
	a.step(busy())
	a.step(busy()) // cut: the probe is a median of ticks
	starved := s
	starved.probe = time.Millisecond // better for the cut, still suffering
	for range yieldHold {
		a.step(starved)
	}
	if _, depth := a.step(starved); depth != 2 || a.rep.Cuts != 2 {
		t.Fatalf("a starved foreground was taken for gone: depth %d, %+v", depth, a.rep)
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

// TestAIMDStarvedForeground: TestYieldBesideReader's failing run as the
// controller saw it. The probe's base is 0.34 ms, nobody else on the
// disk yet; then fio starts beside the copy, behind its 8 MiB in
// flight in a 24 MiB/s throttle: the probe waits 290 ms, fio completes
// 4 requests a tick (14/s). It suffers: the copy is cut.
func TestAIMDStarvedForeground(t *testing.T) {
	a := newAIMD(8)
	a.observe(yieldSample{dt: 30 * time.Millisecond, probe: 340 * time.Microsecond, some: -1, full: -1})
	for range 6 {
		a.step(yieldSample{dt: 290 * time.Millisecond, moved: 7 << 20, probe: 290 * time.Millisecond,
			others: 4 / 0.29, some: 0.95, full: 0.9})
	}
	if a.rep.Cuts < 1 || a.rep.LowestDepth >= 8 {
		t.Fatalf("a reader starved behind the copy was taken for nobody: %+v", a.rep)
	}
}
