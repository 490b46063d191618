package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blkcg/cgtest"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/sysblock"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestYieldBesideReader: ringcp --yield beside a reader that surely
// suffers. Both run in one real blkio cgroup that lets 24 MiB/s be read
// from SRC, a loop device; fio reads 4 KiB at random from SRC with 4 in
// flight, so its reads queue in the throttle behind the copy's. The
// controller sees fio's requests and the wait of its own probe reads,
// cuts depth and rate, and raises them again once fio is gone; the copy
// is exact. Both engines. The queue depth is given (the default's 8),
// so that the good neighbour leaves the window alone: beside others
// seen before the copy it starts at 128 KiB, where fio waited no more
// than it did alone (probe 0.3-1 ms against a base of 0.9 ms, fio at the
// 1300 requests/s it made before) and there was nothing to cut.
//
// late: the copy starts with fio, which mostly reads only once the copy
// has filled the throttle: its reads wait behind the copy's 8 MiB,
// 290 ms each, and it completes a few a tick, as does a reader slow to
// start on a loaded machine (the copy was not cut: those few were taken
// for nobody). It is seen all the same, at a few requests a second.
func TestYieldBesideReader(t *testing.T) {
	uringtest.NeedOn(t)
	blocktest.NeedTool(t, "fio")
	const size, limit = 96 << 20, 24 << 20
	// Built now: the first copy must not spend fio's 2.5 s building
	// ringcp (it did, and the copy started after fio was gone).
	binary(t)
	for _, c := range []struct {
		name, eng string
		late      bool
	}{{"uring", "uring", false}, {"pool", "pool", false}, {"uring-late-reader", "uring", true}} {
		t.Run(c.name, func(t *testing.T) {
			src, _ := blocktest.Device(t, size, "--direct-io=on")
			dst, _ := blocktest.Device(t, size, "--direct-io=on")
			data := randomFile(t, filepath.Join(t.TempDir(), "data"), size, 5)
			if err := os.WriteFile(src, data, 0); err != nil {
				t.Fatal(err)
			}
			g := cgtest.New(t, nil)
			g.Throttle("read_bps_device", src, limit)
			fio := startReader(t, g, src, c.late)
			time.AfterFunc(2500*time.Millisecond, func() { fio.Process.Kill() })
			rep, stderr, _ := runIn(t, g, "--engine", c.eng, "--queue-depth", "8", "--yield", "-v", "--json", "--progress", "none", src, dst)
			if got := readRange(t, dst, 0, size); !bytes.Equal(got, data) {
				t.Fatal("DST differs from SRC")
			}
			y := rep.Yield
			othersLeast := 100.0
			if c.late {
				othersLeast = 1
			}
			if y == nil || y.OthersMax < othersLeast || y.Cuts < 1 || y.LowestDepth >= rep.QueueDepth || y.LowestRate <= 0 || y.Raises < 1 {
				t.Fatalf("beside fio reading SRC, fio gone after 2.5 s: %+v (depth %d; -v above)", y, rep.QueueDepth)
			}
			if !strings.Contains(stderr, "yield: cut ") {
				t.Errorf("-v does not say what yield did:\n%s", stderr)
			}
		})
	}
}

// startReader runs fio in group g reading dev 4 KiB at random, 4 in
// flight, O_DIRECT, until killed. It returns once fio has read for a
// while (2000 reads): under load (8-9) fio took over half a second to
// start, and the copy then started beside no one (others 10 requests/s
// at most) or beside fio's first reads (the probe's base 186 ms once;
// the throttle lets fio's first 600 reads through at once, then holds
// a 4 KiB read up to 40 ms in each slice). late: it returns at once,
// and fio reads from a third of a second on, a second or more under
// load.
func startReader(t *testing.T, g *cgtest.Group, dev string, late bool) *exec.Cmd {
	t.Helper()
	// --thread: one process, that a kill ends with its jobs.
	args := []string{"--name=reader", "--thread", "--filename=" + dev, "--readonly", "--rw=randread", "--bs=4k",
		"--iodepth=4", "--direct=1", "--ioengine=libaio", "--time_based", "--runtime=60", "--output=/dev/null"}
	stat := filepath.Join("/sys/dev/block", cgtest.DiskNumber(t, dev), "stat")
	reads0 := diskReads(t, stat)
	cmd := g.Command("fio", args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if late {
		return cmd
	}
	// 2000: past the first burst, a third of a second at the
	// throttle's 6144 a second.
	for deadline := time.Now().Add(20 * time.Second); diskReads(t, stat)-reads0 < 2000; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("fio made %d reads of %s in 20 s", diskReads(t, stat)-reads0, dev)
		}
	}
	return cmd
}

// diskReads is the reads a disk completed, from its stat file.
func diskReads(t *testing.T, stat string) int64 {
	t.Helper()
	st, err := sysblock.ReadStat(stat)
	if err != nil {
		t.Fatal(err)
	}
	return st.ReadIOs
}
