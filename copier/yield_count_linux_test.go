package copier

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// TestSampleCountsOwnWritesOnce: the watcher's count of the copy's own
// requests on DST's disk, in one tick, against what the disk saw. A
// copy whose writes are whole requests (a raw image, a qcow2 one with
// data clusters) sends each write once: counted both as bytes in
// requests of req and once more per write, it took twice its own and
// hid as many of a foreground's requests (here 40 in a tick, 160/s, of
// a reader on DST's disk), so the good neighbour never heard of it.
// A copy writing a chunk in many pieces (runs of data between holes)
// is still alone. The fourth tick of four alike is judged.
func TestSampleCountsOwnWritesOnce(t *testing.T) {
	const req = 1 << 20
	for _, c := range []struct {
		name          string
		done, writes  int64 // what the copy did in the tick
		disk          int64 // requests DST's disk completed in the tick
		othersAtLeast int64 // per tick
	}{
		{"whole writes, a foreground beside", 64 * req, 64, 64 + 40, 40},
		{"whole writes, alone", 64 * req, 64, 64, 0},
		{"chunks in 30 pieces, alone", 8 * req, 8 * 30, 8 * 30, 0},
		{"chunks in 30 pieces, a foreground beside", 8 * req, 8 * 30, 8*30 + 40, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			stat := filepath.Join(t.TempDir(), "stat")
			setStat := func(reqs int64) {
				t.Helper()
				// reads completed, merged, sectors, ms; writes completed, merged, ...
				if err := os.WriteFile(stat, fmt.Appendf(nil, "0 0 0 0 %d 0 0 0 0 0 0\n", reqs), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			setStat(1000)
			prog := &engine.Progress{}
			y := &yielder{gov: &governor{depth: 8, block: 8 << 20}, prog: prog, psi: [2]int64{-1, -1},
				disks: []*yieldDisk{{stat: stat, req: req, dst: true, reqs: 1000}}}
			// Tick after tick the same: others count from their second
			// tick, once they sent more than the copy's requests in
			// flight (64 of 1 MiB), which might be its own counted late.
			var s yieldSample
			for i := int64(1); i <= 4; i++ {
				y.last = time.Now().Add(-yieldTick)
				prog.Done.Add(c.done)
				prog.Writes.Add(c.writes)
				setStat(1000 + i*c.disk)
				s = y.sample()
			}
			others := int64(s.others*s.dt.Seconds() + 0.5)
			if c.othersAtLeast == 0 && others != 0 || others < c.othersAtLeast {
				t.Errorf("others: %d requests in the tick (%.0f/s); want %d", others, s.others, c.othersAtLeast)
			}
		})
	}
}

// TestSampleSeesStarvedForeground: fio reading SRC 4 KiB at random, 4
// in flight, in one blkio cgroup with the copy, throttled to 24 MiB/s,
// and started after it: its reads queue behind the copy's 8 MiB in
// flight and wait 290 ms each, as long as the probe's, so it completes
// 3 or 4 a tick (TestYieldBesideReader's failing runs, tick after tick:
// 7 MiB read in requests of 1 MiB, one probe read, 4 more requests).
// Fewer than yieldOthersLeast, they were no one, while the probe waited
// a thousand times its base; a request or two a tick, where reads wait
// that long, are still a stray one.
func TestSampleSeesStarvedForeground(t *testing.T) {
	const req, dt, wait = 1 << 20, 290 * time.Millisecond, 290 * time.Millisecond
	for _, c := range []struct {
		name   string
		others int64 // the disk's requests in a tick beyond the copy's
		probe  time.Duration
		seen   bool
	}{
		{"a reader starved behind the copy", 4, wait, true},
		{"a stray request where reads wait long", 1, wait, false},
		{"as many where reads are quick", 4, 2 * time.Millisecond, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			stat := filepath.Join(t.TempDir(), "stat")
			setStat := func(reqs int64) {
				t.Helper()
				if err := os.WriteFile(stat, fmt.Appendf(nil, "%d 0 0 0 0 0 0 0 0 0 0\n", reqs), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			setStat(1000)
			prog := &engine.Progress{}
			y := &yielder{gov: &governor{depth: 8, block: req}, prog: prog, psi: [2]int64{-1, -1},
				disks: []*yieldDisk{{stat: stat, req: req, src: true, reqs: 1000}}}
			reqs := int64(1000)
			var s yieldSample
			for range 6 {
				y.last = time.Now().Add(-dt)
				prog.Read.Add(7 * req)
				y.probed = 1
				reqs += 7 + 1 + c.others
				setStat(reqs)
				s = y.count(c.probe)
			}
			if seen := s.others > 0; seen != c.seen {
				t.Errorf("others %.1f/s, seen %v; want %v", s.others, seen, c.seen)
			}
			if c.seen && s.othersAlone() {
				t.Errorf("others %.1f/s taken for nobody when reads wait %v", s.others, c.probe)
			}
		})
	}
}
