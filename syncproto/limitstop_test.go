package syncproto

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/synctest"
)

// A pull stopped while the applier's changes wait for a --max-rate cap
// ends at once. Limited waited for every byte of a request whatever
// happened meanwhile, and the applier returns only once its workers
// have: with 16 changes of up to 1 MiB in flight, each a write and a
// read-back, a stopped sync at a cap of a few KiB/s went on for hours
// (and a serving side whose client went away with it).
func TestStopWhileCapped(t *testing.T) {
	const size = 4 << 20
	d := t.TempDir()
	srcPath, dstPath := filepath.Join(d, "src"), filepath.Join(d, "dst")
	synctest.WriteFile(t, srcPath, synctest.Random(3, size))
	synctest.WriteFile(t, dstPath, make([]byte, size))
	dst, err := blocksync.OpenTarget(dstPath, blocksync.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	// The bucket starts full: DST's read and the writes of its 4 MiB of
	// changes pass at once, and their read-backs wait at 16 KiB/s.
	l := &Limited{Target: dst, lim: rate.NewLimiter(16<<10, 8<<20), step: 8 << 20}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for deadline := time.Now().Add(20 * time.Second); l.Moved() < 2*size && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	c, s := pipes()
	sv := serve(t, s, ServeOptions{Host: "testhost", Workers: 2})
	returned := make(chan error, 1)
	go func() {
		_, err := Pull(ctx, c, srcPath, l, Options{})
		returned <- err
	}()
	<-ctx.Done()
	select {
	case err := <-returned:
		if err == nil {
			t.Fatalf("a stopped pull succeeded (%d bytes moved)", l.Moved())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Pull had not returned 10 s after it was stopped (%d bytes moved through the cap)", l.Moved())
	}
	sv.wait(t)
}
