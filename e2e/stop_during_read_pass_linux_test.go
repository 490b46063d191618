package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blkcg/cgtest"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/nbdtest"
)

// TestStopDuringVerify: SIGINT while --verify reads an NBD DST back
// (nbdkit's delay filter makes each read take 300 ms). The copy was
// complete and flushed; only the check was stopped, and the lines say
// so: an export is flushed (NBD FLUSH), not fdatasync'ed, and nothing of
// the range is "not completely copied".
func TestStopDuringVerify(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	src := filepath.Join(t.TempDir(), "src")
	randomFile(t, src, 8<<20, 30)
	dst := memory(t, nbdtest.Unix, 8<<20, "--filter=delay", "delay-read=300ms")
	p := startRingcp(t, "--verify", "--progress", "json", "--progress-interval", "50ms", src, dst)
	p.waitFor(t, regexp.MustCompile(`"phase":"verify"`))
	p.signal(t, syscall.SIGINT)
	r := p.wait(t)
	r.want(t, exitInterrupted+int(syscall.SIGINT), "flushed to DST (NBD FLUSH)", "the verification was stopped")
	for _, bad := range []string{"fdatasync", "not completely copied"} {
		if strings.Contains(r.stderr, bad) {
			t.Errorf("stderr says %q of a copy that was complete and flushed", bad)
		}
	}
}

// TestStopReadCommands: SIGINT stops `ringcp checksum` and `ringcp verify`
// (of two loop devices, read through a blkio cgroup that allows 2 MB/s:
// seconds of work), which say how much they had read or compared, never
// what was "written" (issue 20: "copy interrupted after 0 bytes
// written"), and exit 130.
func TestStopReadCommands(t *testing.T) {
	const size = 16 << 20
	a, _ := blocktest.Device(t, size, "--direct-io=on")
	b, _ := blocktest.Device(t, size, "--direct-io=on")
	data := bytes.Repeat([]byte{1}, size)
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, data, 0); err != nil {
			t.Fatal(err)
		}
	}
	g := cgtest.New(t, nil)
	g.Throttle("read_bps_device", a, 2_000_000)
	g.Throttle("read_bps_device", b, 2_000_000)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"checksum", a}, "ringcp: checksum interrupted by SIGINT after "},
		{[]string{"verify", a, b}, "ringcp: verify interrupted by SIGINT after "},
	} {
		r := signalAfter(t, g.Command(binary(t), tc.args...), 500*time.Millisecond, syscall.SIGINT)
		if r.code != exitInterrupted+int(syscall.SIGINT) {
			t.Errorf("%s: exit %d, want 130", tc.args[0], r.code)
		}
		if !strings.Contains(r.stderr, tc.says) || strings.Contains(r.stderr, "written") {
			t.Errorf("%s: stderr should say %q and how much it read, not what was written:\n%s", tc.args[0], tc.says, r.stderr)
		}
	}
}
