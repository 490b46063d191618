package syncproto

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/synctest"
)

// serveArgs takes --serve and the client's --max-rate=N, nothing else.
func TestServeArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		rate int64
		ok   bool
	}{
		{[]string{"--serve"}, 0, true},
		{[]string{"--serve", "--max-rate=1048576"}, 1 << 20, true},
		{[]string{"--serve", "--max-rate=0"}, 0, false},
		{[]string{"--serve", "--max-rate=-5"}, 0, false},
		{[]string{"--serve", "--max-rate=1M"}, 0, false},
		{[]string{"--serve", "/x"}, 0, false},
		{[]string{"--max-rate=5", "--serve"}, 0, false},
		{nil, 0, false},
	} {
		opt, err := serveArgs(c.args)
		if (err == nil) != c.ok || opt.MaxRate != c.rate {
			t.Errorf("%q: %+v, %v", c.args, opt, err)
		}
	}
	args := SSH{ServeArgs: []string{"--max-rate=5"}}.Args(Remote{Host: "h", Path: "/p"})
	if !slices.Equal(args[len(args)-3:], []string{"sync", "--serve", "--max-rate=5"}) {
		t.Errorf("ssh command line %q", args)
	}
}

// TestLimitAccounting: a Limited end charges every byte read or written
// to its limiter: once the first step's burst is spent, the next step
// must wait about a step's worth of the rate. The limiter's own books
// are checked, not the clock of the test.
func TestLimitAccounting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dst")
	synctest.WriteFile(t, path, synctest.Random(1, 1<<20))
	f, err := blocksync.OpenTarget(path, blocksync.TargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const rate = 64 << 10 // a step of 16 KiB, a quarter second
	l := Limit(f, rate)
	if l.step != 16<<10 {
		t.Fatalf("step %d, want 16 KiB", l.step)
	}
	buf := make([]byte, 16<<10)
	if _, err := l.ReadAt(buf, 0); err != nil { // the burst: no wait
		t.Fatal(err)
	}
	r := l.lim.ReserveN(time.Now(), 16<<10)
	wait := r.Delay()
	r.Cancel()
	if wait < 150*time.Millisecond || wait > 300*time.Millisecond {
		t.Errorf("after 16 KiB read at 64 KiB/s the next 16 KiB waits %v, want about 250ms", wait)
	}
	if _, err := l.WriteAt(buf[:100], 5); err != nil {
		t.Fatal(err)
	}
	if l.Moved() != 16<<10+100 {
		t.Errorf("moved %d, want %d", l.Moved(), 16<<10+100)
	}
	if (*Limited)(nil).Moved() != 0 {
		t.Error("a nil Limited moved bytes")
	}
}

// lyingTarget is DST whose device holds other bytes than its page cache
// served: after DropCache, the byte at bad reads inverted. It stands for
// a disk that lost a write the cache still shows.
type lyingTarget struct {
	*blocksync.File
	bad     int64
	dropped atomic.Bool
}

func (l *lyingTarget) DropCache() error { l.dropped.Store(true); return nil }

func (l *lyingTarget) ReadAt(p []byte, off int64) (int, error) {
	n, err := l.File.ReadAt(p, off)
	if l.dropped.Load() && l.bad >= off && l.bad < off+int64(n) {
		p[l.bad-off] ^= 0xff
	}
	return n, err
}

// TestVerifyRereads: with Options.Verify the side holding DST reads it
// all back after the fdatasync, past the page cache: a DST whose device
// lost a byte (one the sync did not even write) ends the sync with a
// *MismatchError; without Verify the end-to-end digest, folded from what
// was read before, passes it; an honest DST passes both.
func TestVerifyRereads(t *testing.T) {
	const size = 3<<20 + 4097
	for _, c := range []struct {
		verify, lie, bad bool
	}{{true, true, true}, {false, true, false}, {true, false, false}} {
		d := t.TempDir()
		srcPath, dstPath := filepath.Join(d, "src"), filepath.Join(d, "dst")
		src := synctest.Random(7, size)
		old := append([]byte(nil), src...)
		old[100] ^= 1 // one granule to write
		synctest.WriteFile(t, srcPath, src)
		synctest.WriteFile(t, dstPath, old)
		f, err := blocksync.OpenTarget(dstPath, blocksync.TargetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		target := blocksync.Target(f)
		if c.lie {
			target = &lyingTarget{File: f, bad: 2<<20 + 5}
		}
		cl, sv := pipes()
		s := serve(t, sv, ServeOptions{Host: "testhost"})
		_, err = Pull(context.Background(), cl, srcPath, target, Options{Verify: c.verify})
		s.wait(t)
		f.Close()
		var mm *MismatchError
		if c.bad != errors.As(err, &mm) || (!c.bad && err != nil) {
			t.Errorf("verify %v, lying %v: %v", c.verify, c.lie, err)
		}
	}
}
