package copier

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// TestYieldPausedTick: --yield's tick that spans a stop of the process
// (SIGSTOP for 5 s) is not stepped: by hand, a 256 MiB copy under
// --yield --max-rate 30M stopped 12 s beside a busy bench took 34 s
// where it took 10 unstopped: the stop counted as time yielded ("yielded
// to other I/O for 24.4 s"), and a cut made on such a tick cut from the
// copy's rate over it, a MiB in 5 s, to the floor. Here the copy has cut
// its rate already and moved a MiB in the 5 s tick: stepped, the tick
// added 5 s cut and a raise, and taught the copy's own rate 1/5 MiB/s.
func TestYieldPausedTick(t *testing.T) {
	const own, stop = 100 << 20, 5 * time.Second
	stat := filepath.Join(t.TempDir(), "stat")
	if err := os.WriteFile(stat, fmt.Appendf(nil, "0 0 0 0 %d 0 0 0 0 0 0\n", 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	prog := &engine.Progress{}
	g := newGovernor(0, 8<<20, 4096, 8, false, false)
	y := &yielder{ctl: newAIMD(8), gov: g, prog: prog, psi: [2]int64{-1, -1},
		disks: []*yieldDisk{{stat: stat, req: 1 << 20, dst: true, reqs: 1000}}}
	y.ctl.own, y.ctl.rate, y.ctl.depth = own, own/4, 2
	g.beatStart(time.Now().Add(-stop)) // the heartbeat last beat as the stop began
	y.last = time.Now().Add(-stop)
	prog.Read.Add(1 << 20)
	prog.Done.Add(1 << 20)
	rep := y.ctl.rep
	y.tick()
	if y.ctl.rep != rep || y.ctl.own != own || y.ctl.rate != own/4 {
		t.Errorf("a tick across a stop of %v: report %+v (was %+v), own rate %.0f (was %d), rate %.0f: want none changed",
			stop, y.ctl.rep, rep, y.ctl.own, own, y.ctl.rate)
	}
}
