package engine

import (
	"context"
	"testing"
)

// TestProgressPhasesAndSplit: the barrier is sent in PhaseSync with every
// byte of the range already counted done; reads happen in PhaseCopy (after
// PhaseMap, which only covers SRC's flush); Done is exactly the sum
// of what became data, zeros and holes on DST; and Writes counts every
// request that wrote or zeroed DST.
func TestProgressPhasesAndSplit(t *testing.T) {
	const bs = 4096
	src := append(append(pattern(3*bs, 7), make([]byte, 4*bs)...), pattern(bs+100, 9)...) // data, zeros, data
	job, _, cleanup := scriptJob(t, src, pattern(len(src), 1), bs, 2)
	defer cleanup()
	job.ZeroBlock = bs
	job.Progress = &Progress{}
	job.Progress.SetPhase(PhaseDone) // anything else: Open must start the copy's phases itself
	var syncPhase, readPhase Phase = -1, -1
	var doneAtSync, writes int64
	script := func(q Request) (Completion, bool, bool) {
		switch q.Op {
		case OpWrite, OpFallocate:
			if q.File != FileSrc {
				writes++
			}
		case OpSync:
			syncPhase, doneAtSync = job.Progress.Phase(), job.Progress.Done.Load()
		case OpRead:
			if readPhase < 0 {
				readPhase = job.Progress.Phase()
			}
		}
		return Completion{}, false, false
	}
	job.MapHoles = true
	if _, err := Run(context.Background(), job, newScripted(script)); err != nil {
		t.Fatal(err)
	}
	p := job.Progress
	if syncPhase != PhaseSync || doneAtSync != int64(len(src)) {
		t.Errorf("barrier sent in phase %v with %d done; want sync with all %d", syncPhase, doneAtSync, len(src))
	}
	if readPhase != PhaseCopy {
		t.Errorf("first read in phase %v, want copy", readPhase)
	}
	done, data, zeroed, holes := p.Done.Load(), p.Data.Load(), p.Zeroed.Load(), p.Holes.Load()
	if done != int64(len(src)) || data+zeroed+holes != done || zeroed+holes != 4*bs {
		t.Errorf("done %d = data %d + zeroed %d + holes %d; want %d, with %d of zeros", done, data, zeroed, holes, len(src), 4*bs)
	}
	if got := p.Writes.Load(); got != writes || got < 2 {
		t.Errorf("Writes %d; want the %d requests that wrote or zeroed DST (two runs of data at least)", got, writes)
	}
}

// TestPhaseNames: the names progress reports and JSON carry.
func TestPhaseNames(t *testing.T) {
	for ph, want := range map[Phase]string{PhaseCopy: "copy", PhaseMap: "map", PhaseSync: "sync", PhaseVerify: "verify", PhaseDone: "done", 42: "unknown"} {
		if b, _ := ph.MarshalText(); ph.String() != want || string(b) != want {
			t.Errorf("Phase(%d) = %q, want %q", ph, ph.String(), want)
		}
		var back Phase
		if err := back.UnmarshalText([]byte(want)); (err == nil) != (want != "unknown") || (err == nil && back != ph) {
			t.Errorf("UnmarshalText(%q) = %v, %v", want, back, err)
		}
	}
}
