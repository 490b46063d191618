package enginetest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/engine"
)

// SourceShrank plans a copy longer than SRC, as if SRC had been truncated
// after its size was taken: the engine must fail, naming the read.
func SourceShrank(t *testing.T, tg Target) {
	for _, direct := range []bool{false, true} {
		dir := t.TempDir()
		srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
		src := RandomBytes(100_000, 5)
		writeFile(t, srcPath, src)
		job, cleanup := NewJob(t, srcPath, dstPath, direct, 16384, 4)
		job.Length, job.FinalSize, job.CutBackOnStop = 200_000, 200_000, true
		tg.serve(t, &job)
		st, err := engine.Run(context.Background(), job, tg.New)
		cleanup()
		var oe *engine.OpError
		if !errors.Is(err, engine.ErrSourceShrank) || !errors.As(err, &oe) || oe.Op != "read" || oe.Path != EndName(job, engine.FileSrc) {
			t.Fatalf("direct=%v: err = %v, want a read OpError on %s wrapping ErrSourceShrank", direct, err, EndName(job, engine.FileSrc))
		}
		// Any read at or past the last full block may be the first to
		// find the end; none before it may.
		if oe.Offset < 98304 || oe.Offset >= 200_000 {
			t.Errorf("direct=%v: error offset %d, want in [98304, 200000)", direct, oe.Offset)
		}
		// DST is cut back to what was written without gaps: a failed copy
		// must not keep the full size and look finished.
		got, _ := os.ReadFile(dstPath)
		if int64(len(got)) != st.Contiguous || st.Contiguous > 98304 {
			t.Fatalf("direct=%v: DST is %d bytes, contiguous %d: want DST cut to the contiguous prefix", direct, len(got), st.Contiguous)
		}
		Compare(t, got, src[:len(got)])
	}
}

// Canceled stops a copy with an already cancelled context: nothing is
// started, the error says so, and what was written is synced.
func Canceled(t *testing.T, tg Target) {
	dir := t.TempDir()
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, srcPath, RandomBytes(1<<20, 6))
	job, cleanup := NewJob(t, srcPath, dstPath, true, 65536, 4)
	defer cleanup()
	job.Length = 1 << 20
	job.FinalSize, job.CutBackOnStop = 1<<20, true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tg.serve(t, &job)
	st, err := engine.Run(ctx, job, tg.New)
	var ce *engine.CanceledError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a CanceledError wrapping context.Canceled", err)
	}
	if st.BytesWritten != 0 || !ce.Synced {
		t.Fatalf("stats %+v, error %+v: want nothing written and a sync", st, ce)
	}
	if fi, _ := os.Stat(dstPath); fi.Size() != 0 {
		t.Fatalf("DST is %d bytes after a cancelled copy: the final size must not be set", fi.Size())
	}
}
