package blocksync

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/internal/synctest"
)

// failingTarget fails the write that reaches byte failAt with EIO.
type failingTarget struct {
	*File
	failAt int64
}

func (f failingTarget) WriteAt(p []byte, off int64) (int, error) {
	if off <= f.failAt && f.failAt < off+int64(len(p)) {
		return 0, &OpError{Op: "write", Path: f.Name(), Offset: f.failAt, Err: syscall.EIO}
	}
	return f.File.WriteAt(p, off)
}

// cancelAfter cancels ctx after n reads of SRC.
type cancelAfter struct {
	*File
	n      atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) ReadAt(p []byte, off int64) (int, error) {
	if c.n.Add(-1) == 0 {
		c.cancel()
	}
	return c.File.ReadAt(p, off)
}

// growing claims more bytes than SRC has: SRC "shrank" during the sync.
type growing struct{ *File }

func (g growing) Size() int64 { return g.File.Size() + 4096 }

// openPair makes SRC and DST files of different content and opens them.
func openPair(t *testing.T, size int64) (*File, *File) {
	t.Helper()
	dir := t.TempDir()
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	synctest.WriteFile(t, srcPath, synctest.Random(1, size))
	synctest.WriteFile(t, dstPath, synctest.Random(2, size))
	src, err := OpenSource(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	dst, err := OpenTarget(dstPath, TargetOptions{Src: src})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	return src, dst
}

// A failed write stops the sync with an error that names op, path,
// offset and errno; a stopped or cancelled one never reports success.
func TestSyncFailures(t *testing.T) {
	const size = 16 << 20
	t.Run("write error", func(t *testing.T) {
		src, dst := openPair(t, size)
		_, err := Sync(context.Background(), src, failingTarget{dst, 5<<20 + 3}, Options{Window: 1 << 20})
		var oe *OpError
		if !errors.As(err, &oe) || !errors.Is(err, syscall.EIO) || oe.Op != "write" || oe.Offset != 5<<20+3 ||
			!strings.Contains(err.Error(), "write "+dst.Name()+" at offset 5242883: input/output error (EIO)") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		src, dst := openPair(t, size)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ca := &cancelAfter{File: src, cancel: cancel}
		ca.n.Store(3)
		st, err := Sync(ctx, ca, dst, Options{Window: 1 << 20, Workers: 2})
		if !errors.Is(err, context.Canceled) || st.SrcRead >= size {
			t.Fatalf("got %+v, %v; want it stopped early with context.Canceled", st, err)
		}
	})
	t.Run("SRC shrank", func(t *testing.T) {
		src, dst := openPair(t, size)
		_, err := Sync(context.Background(), growing{src}, dst, Options{})
		var oe *OpError
		if !errors.As(err, &oe) || oe.Op != "read" || oe.Offset != size || !strings.Contains(err.Error(), "SRC ended early") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("bad granule", func(t *testing.T) {
		src, dst := openPair(t, 4096)
		_, err := Sync(context.Background(), src, dst, Options{Granule: 1 << 17})
		wantRefused(t, err, KindBadInput, "granule 131072")
	})
}
