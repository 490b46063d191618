package cli

import (
	"io"
	"os"
	"testing"
)

// racingCap is a copy's cap; the first change it takes comes with a
// later `ringcp rate` writing the control file anew, as one does that
// runs while the copy applies the change before it.
type racingCap struct {
	rate  int64
	later func()
}

func (c *racingCap) MaxRate() int64 { return c.rate }

func (c *racingCap) SetMaxRate(bps int64) {
	c.rate = bps
	if c.later != nil {
		c.later()
		c.later = nil
	}
}

// TestRateChangeNotLost: `ringcp rate PID 10M` then `ringcp rate PID 20M`,
// the second while the copy applies the first (between its read of the
// control file and its write back of what it applied). The copy wrote
// back 10M over the 20M the second had written, then read 10M again on
// the second's signal: both commands exited 0, and the copy went on at
// 10M, as `ringcp rate PID` then said. The last change asked must be the
// cap.
func TestRateChangeNotLost(t *testing.T) {
	t.Setenv("RINGCP_RUNDIR", t.TempDir())
	c := &racingCap{}
	rc := &rateControl{name: controlName(os.Getpid()), plan: c}
	if err := rc.create(); err != nil {
		t.Fatal(err)
	}
	defer rc.dir.Close()
	ask := func(rate int64) {
		t.Helper()
		if err := writeControl(rc.dir, rc.name, control{start: rc.start, rate: rate}); err != nil {
			t.Fatal(err)
		}
	}
	ask(10 << 20)
	c.later = func() { ask(20 << 20) }
	rc.apply(io.Discard) // the first's signal
	rc.apply(io.Discard) // the second's
	got, err := liveControl(rc.dir, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if c.rate != 20<<20 || got.rate != 20<<20 {
		t.Errorf("asked 10M then 20M: the copy's cap %d, its control file says %d; want %d both", c.rate, got.rate, 20<<20)
	}
}
