package syncproto

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/synctest"
)

// A client stopped mid-sync (SIGINT cancels its context) closes the
// connection; the server sees the client go and ends without saying
// done, without naming a new DST, and the client reports the stop, not
// success.
func TestCancelMidSync(t *testing.T) {
	const size = 24 << 20
	d := t.TempDir()
	srcPath := filepath.Join(d, "src")
	synctest.WriteFile(t, srcPath, synctest.Random(11, size))
	for _, create := range []bool{true, false} {
		dstPath := filepath.Join(d, "dst")
		if !create {
			synctest.WriteFile(t, dstPath, make([]byte, size))
		}
		ctx, cancel := context.WithCancel(context.Background())
		var p blocksync.Progress
		go func() {
			for p.Changed.Load() < 4<<20 && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		cl, sv, cerr, serr := push(t, ctx, srcPath, dstPath, Options{Create: create, Progress: &p})
		cancel()
		if !errors.Is(cerr, context.Canceled) || serr == nil || cl.Written >= size {
			t.Fatalf("create=%v: client %+v %v; server %+v %v", create, cl, cerr, sv, serr)
		}
		_, err := os.Stat(dstPath)
		if create && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a stopped sync named its new DST: %v", err)
		}
		if left, _ := filepath.Glob(filepath.Join(d, ".dst.*")); len(left) != 0 {
			t.Fatalf("left behind: %v", left)
		}
	}
}
