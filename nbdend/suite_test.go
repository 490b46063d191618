package nbdend_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/fallback"
	"github.com/ringcp/ringcp/internal/nbdtest"
	"github.com/ringcp/ringcp/nbd"
	"github.com/ringcp/ringcp/nbdend"
)

// The shared suite on the pool with Exports for ends: SRC (and DST where
// a fixed size allows) served by a real server over the very files the
// suite writes and compares. (The pool on files alone is fallback's
// TestPoolSuite.)

// TestSuiteQemuNBD serves SRC read-only with qemu-nbd (which rounds the
// export's size up to 512 bytes, as QEMU does) and an eligible DST
// writable, one connection each (qemu-nbd offers CAN_MULTI_CONN only
// read-only).
func TestSuiteQemuNBD(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd")
	var n served
	enginetest.RunTarget(t, enginetest.Target{New: fallback.New, Serve: n.serve(func(t testing.TB, path string, ro bool) string {
		var extra []string
		if ro {
			extra = append(extra, "-r")
		}
		return nbdtest.QemuNBD(t, nbdtest.Unix, "raw", path, extra...).URI
	})})
	n.check(t)
}

// TestSuiteNbdkit serves both ends with nbdkit's file plugin (exact sizes,
// CAN_MULTI_CONN) over four connections, over TCP.
func TestSuiteNbdkit(t *testing.T) {
	nbdtest.Need(t, "nbdkit")
	var n served
	enginetest.RunTarget(t, enginetest.Target{New: fallback.New, Serve: n.serve(func(t testing.TB, path string, ro bool) string {
		args := []string{"file", path}
		if ro {
			args = append([]string{"-r"}, args...)
		}
		return nbdtest.Nbdkit(t, nbdtest.TCP, args...).URI
	})})
	n.check(t)
}

// served counts the ends a suite run put behind servers.
type served struct {
	mu       sync.Mutex
	src, dst int
}

// check fails a suite that served no DST, or served too few: the suite's
// ranges, random copies into old data and compares must have been.
func (n *served) check(t *testing.T) {
	t.Logf("served %d SRCs, %d DSTs", n.src, n.dst)
	if n.src < 100 || n.dst < 20 {
		t.Errorf("served %d SRCs and %d DSTs: the suite did not run on NBD ends", n.src, n.dst)
	}
}

// serve returns a Serve hook that puts SRC behind a server started by
// start, and DST too when the job leaves its size alone and the file
// already holds the range (an export's size is fixed).
func (n *served) serve(start func(t testing.TB, path string, ro bool) string) func(testing.TB, *engine.Job) {
	return func(t testing.TB, job *engine.Job) {
		t.Helper()
		src := job.Files[engine.FileSrc].Name()
		job.Ends[engine.FileSrc], job.Files[engine.FileSrc] = dial(t, start(t, src, true)), nil
		n.count(&n.src)
		dst := job.Files[engine.FileDst]
		if dst == nil || job.CutBackOnStop || job.FinalSize > 0 {
			return
		}
		fi, err := os.Stat(dst.Name())
		if err != nil || fi.Size() < job.DstOff+job.Length {
			return
		}
		job.Ends[engine.FileDst], job.Files[engine.FileDst] = dial(t, start(t, dst.Name(), job.Check != nil)), nil
		n.count(&n.dst)
	}
}

func (n *served) count(c *int) {
	n.mu.Lock()
	*c++
	n.mu.Unlock()
}

// dial opens an export for a job with four connections where the server
// allows them, and closes it at the test's end.
func dial(t testing.TB, uri string) *nbdend.Export {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	x, err := nbdend.Dial(ctx, uri, nbd.Options{Connections: 4, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("dial %s: %v", uri, err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}
