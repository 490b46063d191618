package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blkcg/cgtest"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestCgroupLimit: ringcp run inside a real v1 blkio cgroup that throttles
// a loop device, on both engines, writes (DST's write_bps_device) and
// reads (SRC's read_bps_device). ringcp finds the limit and says so,
// keeps no more than a second of the limit in flight in blocks of at most
// an eighth of a second, and the throttle charges every byte once: before
// the fix io_uring's requests were charged twice (io_service_bytes said
// 2x the copy for 8 MiB requests, 1.2x for 1.25 MiB ones on these
// sparse-backed loop devices), which halved the rate. The copy is exact,
// and takes at least what the limit allows (a lower bound on time only:
// the rate it reaches is the bench's to measure).
func TestCgroupLimit(t *testing.T) {
	uringtest.NeedOn(t)
	const size, limit = 48 << 20, 24 << 20
	for _, eng := range []string{"uring", "pool"} {
		for _, op := range []string{"Write", "Read"} {
			t.Run(eng+"/"+op, func(t *testing.T) {
				src, _ := blocktest.Device(t, size, "--direct-io=on")
				dst, _ := blocktest.Device(t, size, "--direct-io=on")
				data := randomFile(t, filepath.Join(t.TempDir(), "data"), size, 21)
				if err := os.WriteFile(src, data, 0); err != nil {
					t.Fatal(err)
				}
				throttled, file := dst, "write_bps_device"
				if op == "Read" {
					throttled, file = src, "read_bps_device"
				}
				g := cgtest.New(t, nil)
				g.Throttle(file, throttled, limit)
				rep, stderr, took := runIn(t, g, "--engine", eng, "-v", "--json", "--progress", "none", src, dst)
				if got := readRange(t, dst, 0, size); !bytes.Equal(got, data) {
					t.Fatal("DST differs from SRC")
				}
				checkFitted(t, rep, stderr, throttled, limit)
				if charged := g.ServiceBytes(throttled, op); charged < size || charged > size*11/10 {
					t.Errorf("the throttle charged %d bytes of %s for a copy of %d", charged, op, size)
				}
				if least := time.Duration(float64(size) / limit * 0.8 * float64(time.Second)); took < least {
					t.Errorf("%d bytes in %v under a limit of %d/s", size, took, limit)
				}
			})
		}
	}
}

// runIn runs ringcp inside group g and returns its --json report, its
// stderr and how long it ran.
func runIn(t *testing.T, g *cgtest.Group, args ...string) (jsonReport, string, time.Duration) {
	t.Helper()
	cmd := g.Command(binary(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	t.Logf("ringcp %s -> %v in %v\n%s", strings.Join(args, " "), err, took, errOut.String())
	if err != nil {
		t.Fatal(err)
	}
	var rep jsonReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	return rep, errOut.String(), took
}

// checkFitted: the report names the limit on the throttled disk, -v says
// why requests are issued blocking, a block is at most an eighth of a
// second of the limit and no more than a second of it is in flight.
func checkFitted(t *testing.T, rep jsonReport, stderr, dev string, limit uint64) {
	t.Helper()
	disk := cgtest.DiskNumber(t, dev)
	if len(rep.IOLimits) != 1 || rep.IOLimits[0].Disk != disk || rep.IOLimits[0].ReadBPS+rep.IOLimits[0].WriteBPS != limit {
		t.Errorf("io_limits %+v: want %d/s on %s", rep.IOLimits, limit, disk)
	}
	if !strings.Contains(stderr, "cgroup I/O limit on") || !strings.Contains(stderr, "IOSQE_ASYNC") {
		t.Errorf("-v does not explain the limit:\n%s", stderr)
	}
	if uint64(rep.BlockSize) > limit/8 || uint64(rep.BlockSize*rep.QueueDepth) > limit {
		t.Errorf("block %d x depth %d: over an eighth or a second of %d/s", rep.BlockSize, rep.QueueDepth, limit)
	}
	if rep.Engine == "io_uring" && !strings.Contains(rep.EngineDetail, "IOSQE_ASYNC") {
		t.Errorf("io_uring without blocking submission: %s", rep.EngineDetail)
	}
}
