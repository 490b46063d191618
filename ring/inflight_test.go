package ring

import (
	"syscall"
	"testing"
)

// TestManyInFlightOutOfOrder keeps 256 requests in flight at once: O_DIRECT
// reads that go to the disk, interleaved with NOPs that complete at once.
// Every user_data must come back exactly once, and the NOPs must overtake
// the reads, which proves completions are handled out of order.
func TestManyInFlightOutOfOrder(t *testing.T) {
	const n, blk = 256, 4096
	f := tempFile(t, syscall.O_DIRECT)
	// Real allocated blocks: reads of a hole complete inline, without I/O.
	data := mmapBuf(t, n*blk)
	fill(data, 3)
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	r := newRing(t, n, &Options{Flags: FlagSingleIssuer | FlagDeferTaskrun | FlagTaskrunFlag})
	bufs := mmapBuf(t, n*blk)
	for i := 0; i < n; i++ {
		sqe := r.GetSQE()
		if sqe == nil {
			t.Fatalf("SQ full after %d of %d entries", i, n)
		}
		if i%2 == 0 {
			sqe.PrepRead(int32(f.Fd()), bufs[i*blk:(i+1)*blk], uint64(i*blk))
		} else {
			sqe.PrepNop()
		}
		sqe.UserData = uint64(i)
	}
	if r.GetSQE() != nil {
		t.Fatal("GetSQE handed out more entries than the SQ holds")
	}
	if got, err := r.SubmitAndWait(n); err != nil || got != n {
		t.Fatalf("SubmitAndWait(%d) = %d, %v", n, got, err)
	}
	seen := make([]bool, n)
	order := reapAll(t, r, n, func(c CQE) {
		want := int32(blk)
		if c.UserData%2 == 1 {
			want = 0
		}
		if c.Res != want {
			t.Errorf("user_data %d: res %d, want %d", c.UserData, c.Res, want)
		}
		if seen[c.UserData] {
			t.Errorf("user_data %d completed twice", c.UserData)
		}
		seen[c.UserData] = true
	})
	if inversions(order) == 0 {
		t.Error("completions came back in submission order; expected NOPs to overtake disk reads")
	}
	if r.InFlight() != 0 {
		t.Errorf("InFlight = %d after reaping everything", r.InFlight())
	}
}

// TestMoreThanTheSQHolds pushes 1000 requests through an 8-entry SQ in
// batches, reaping as it goes; none may be lost.
func TestMoreThanTheSQHolds(t *testing.T) {
	const total = 1000
	r := newRing(t, 8, nil)
	seen := make(map[uint64]bool)
	next := 0
	for next < total || r.InFlight() > 0 {
		for next < total {
			sqe := r.GetSQE()
			if sqe == nil {
				break
			}
			sqe.PrepNop()
			sqe.UserData = uint64(next)
			next++
		}
		if _, err := r.SubmitAndWait(1); err != nil {
			t.Fatalf("SubmitAndWait: %v", err)
		}
		if _, err := r.ForEachCQE(func(c CQE) { seen[c.UserData] = true }); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != total {
		t.Fatalf("saw %d distinct completions, want %d", len(seen), total)
	}
}

// TestCQOverflowLosesNothing submits four times the CQ's size without
// reaping. The kernel parks the extra CQEs in its overflow list (NODROP,
// 5.5+); they must all come back.
func TestCQOverflowLosesNothing(t *testing.T) {
	for _, opts := range []*Options{
		{CQEntries: 16},
		{CQEntries: 16, Flags: FlagSingleIssuer | FlagDeferTaskrun},
	} {
		t.Run(opts.Flags.String(), func(t *testing.T) {
			const total = 64
			r := newRing(t, 16, opts)
			if r.CQEntries() != 16 {
				t.Fatalf("CQEntries = %d, want 16", r.CQEntries())
			}
			for i := 0; i < total; i++ {
				sqe := r.GetSQE()
				if sqe == nil {
					if _, err := r.Submit(); err != nil {
						t.Fatalf("Submit at %d: %v", i, err)
					}
					sqe = r.GetSQE()
				}
				sqe.PrepNop()
				sqe.UserData = uint64(i)
			}
			if _, err := r.Submit(); err != nil {
				t.Fatalf("Submit: %v", err)
			}
			seen := make(map[uint64]bool)
			reapAll(t, r, total, func(c CQE) { seen[c.UserData] = true })
			if len(seen) != total {
				t.Fatalf("got %d distinct completions of %d", len(seen), total)
			}
		})
	}
}

func TestWaitingForTheImpossibleIsAnError(t *testing.T) {
	r := newRing(t, 4, nil)
	sqe := r.GetSQE()
	sqe.PrepNop()
	if _, err := r.SubmitAndWait(2); err == nil {
		t.Fatal("waiting for 2 completions with 1 request did not fail")
	}
}

// reapAll waits for and consumes n completions, returning their user_data in
// arrival order.
func reapAll(t *testing.T, r *Ring, n int, check func(CQE)) []uint64 {
	t.Helper()
	var order []uint64
	for len(order) < n {
		if err := r.WaitCQEs(1); err != nil {
			t.Fatalf("WaitCQEs after %d: %v", len(order), err)
		}
		if _, err := r.ForEachCQE(func(c CQE) {
			check(c)
			order = append(order, c.UserData)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(order) != n {
		t.Fatalf("reaped %d, want %d", len(order), n)
	}
	return order
}

func inversions(order []uint64) int {
	n := 0
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			n++
		}
	}
	return n
}
