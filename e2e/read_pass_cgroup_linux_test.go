package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blkcg/cgtest"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// Read passes under a cgroup read limit: `ringcp checksum`, `ringcp
// verify` and a copy's --verify read-back fit their requests and depth to
// the limit as a copy does, and stop as promptly: a second of the limit
// in flight at most. Before, they kept 8 MiB requests 8 deep in the
// throttle's queue, which a stop had to wait for (6 s under 5 MB/s; 30 s
// under the 2 MiB/s here).

// passLimit is the read limit the tests set: low, so that what an unfit
// pass leaves in the kernel's queue takes long to drain.
const passLimit = 2 << 20

// startInGroup starts ringcp inside cgroup g, its stderr collected.
func startInGroup(t *testing.T, g *cgtest.Group, args ...string) *proc {
	t.Helper()
	return startCmd(t, g.Command(binary(t), args...), nil)
}

// stopPass signals s and checks that it exits with 128+sig within
// capWithin.
func stopPass(t *testing.T, s *proc, sig syscall.Signal) {
	t.Helper()
	start := time.Now()
	s.signal(t, sig)
	r := s.wait(t)
	took := time.Since(start)
	t.Logf("stopped %v after %v", sig, took)
	if took > capWithin {
		t.Errorf("under a read limit of %d/s, %v took %v to stop the pass", passLimit, sig, took)
	}
	r.want(t, 128+int(sig))
}

// readLimited makes a 64 MiB loop device of random data and a cgroup
// that limits its reads to passLimit.
func readLimited(t *testing.T) (dev string, data []byte, g *cgtest.Group) {
	t.Helper()
	const size = 64 << 20
	dev, _ = blocktest.Device(t, size, "--direct-io=on")
	data = randomFile(t, filepath.Join(t.TempDir(), "data"), size, 81)
	if err := os.WriteFile(dev, data, 0); err != nil {
		t.Fatal(err)
	}
	g = cgtest.New(t, nil)
	g.Throttle("read_bps_device", dev, passLimit)
	return dev, data, g
}

// TestReadPassCgroupStop: checksum, verify, and a copy's --verify
// read-back, each reading a loop device whose reads a real v1 blkio
// cgroup limits to 2 MiB/s, stop within capWithin of SIGINT or SIGTERM;
// -v says how the reads were fitted. Both engines.
func TestReadPassCgroupStop(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range []string{"uring", "pool"} {
		t.Run(eng+"/checksum", func(t *testing.T) {
			dev, _, g := readLimited(t)
			p := startInGroup(t, g, "checksum", "-v", "--engine", eng, dev)
			time.Sleep(1500 * time.Millisecond)
			stopPass(t, p, syscall.SIGINT)
			fitted(t, p.output())
		})
		t.Run(eng+"/verify", func(t *testing.T) {
			dev, data, g := readLimited(t)
			other := filepath.Join(t.TempDir(), "same")
			if err := os.WriteFile(other, data, 0o644); err != nil {
				t.Fatal(err)
			}
			p := startInGroup(t, g, "verify", "-v", "--engine", eng, other, dev)
			time.Sleep(1500 * time.Millisecond)
			stopPass(t, p, syscall.SIGTERM)
			fitted(t, p.output())
		})
		t.Run(eng+"/copy-verify", func(t *testing.T) {
			dev, data, g := readLimited(t)
			src := filepath.Join(t.TempDir(), "src")
			if err := os.WriteFile(src, data, 0o644); err != nil {
				t.Fatal(err)
			}
			p := startInGroup(t, g, "-v", "--verify", "--progress", "always", "--engine", eng, src, dev)
			waitUntil(t, func() bool { return strings.Contains(p.output(), "verifying") })
			time.Sleep(time.Second)
			stopPass(t, p, syscall.SIGINT)
			if !strings.Contains(p.output(), "read passes (read-back, checksum of a resumed part): reads of at most 256 KiB") {
				t.Errorf("-v does not say how the read-back fits the limit:\n%s", p.output())
			}
		})
	}
}

// fitted: -v names the read limit and the reads' fit to it: an eighth of
// a second per request, a second in flight.
func fitted(t *testing.T, stderr string) {
	t.Helper()
	for _, want := range []string{"cgroup I/O limit on", "read 2.00 MiB/s", "reads of at most 256 KiB, 8 in flight", "IOSQE_ASYNC"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("-v lacks %q:\n%s", want, stderr)
		}
	}
}

// TestChecksumCgroupCharged: a checksum under a read limit of 8 MiB/s is
// right, and the throttle charged each byte once (reads are issued
// blocking, as a copy's are). Both engines.
func TestChecksumCgroupCharged(t *testing.T) {
	uringtest.NeedOn(t)
	const size, limit = 16 << 20, 8 << 20
	for _, eng := range []string{"uring", "pool"} {
		t.Run(eng, func(t *testing.T) {
			dev, _ := blocktest.Device(t, size, "--direct-io=on")
			data := randomFile(t, filepath.Join(t.TempDir(), "data"), size, 82)
			if err := os.WriteFile(dev, data, 0); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			want := ringcp(t, "checksum", file)
			want.want(t, 0)
			g := cgtest.New(t, nil)
			g.Throttle("read_bps_device", dev, limit)
			got := runToEnd(t, g.Command(binary(t), "checksum", "--engine", eng, dev))
			if got.code != exitOK {
				t.Fatalf("checksum under the limit: exit %d\n%s", got.code, got.stderr)
			}
			if got.stdout != want.stdout {
				t.Errorf("checksum under the limit %q, want %q", got.stdout, want.stdout)
			}
			if charged := g.ServiceBytes(dev, "Read"); charged < size || charged > size*11/10 {
				t.Errorf("the throttle charged %d bytes of reads for a checksum of %d", charged, size)
			}
		})
	}
}
