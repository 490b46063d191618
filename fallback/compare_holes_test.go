package fallback_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/fallback"
)

// TestCompareSkipsDstWhereSrcHasHoles: a compare pass (Job.Check with
// both files: "ringcp verify", the read-back after a copy) with MapHoles
// never reads DST where SRC has a hole: the hole chunk is reported to the
// Observer and counted done, and Check is not called for it. A DST that
// holds data there (a copy that failed to zero a hole, an old file
// compared with a sparse one) compares equal: the pass returns nil. A
// compare must see every byte of the range on both sides, or the
// contract must say that holes are the caller's to check, and how.
func TestCompareSkipsDstWhereSrcHasHoles(t *testing.T) {
	const mib = 1 << 20
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	head, tail := enginetest.RandomBytes(mib, 1), enginetest.RandomBytes(mib, 2)
	// SRC: data, a 4 MiB hole, data. DST: the same data, and junk where
	// SRC has its hole.
	writeAt(t, src, 0, head)
	writeAt(t, src, 5*mib, tail)
	writeAt(t, dst, 0, head)
	writeAt(t, dst, mib, bytes.Repeat([]byte{0xee}, 4*mib))
	writeAt(t, dst, 5*mib, tail)

	var compared int64
	job := engine.Job{BlockSize: 128 << 10, SrcAlign: 1, DstAlign: 1, Length: 6 * mib,
		Sparse: engine.Sparse{MapHoles: true},
		Check: func(rel int64, s, d []byte) error {
			compared += int64(len(s))
			if !bytes.Equal(s, d) {
				return fmt.Errorf("differ in the chunk at %d", rel)
			}
			return nil
		}}
	job.Files[engine.FileSrc] = open(t, src)
	job.Files[engine.FileDst] = open(t, dst)
	bufs, err := align.AllocBuffers(4, job.BlockSize)
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Free()
	job.Buffers = bufs.Slots
	_, err = engine.Run(context.Background(), job, fallback.New)
	if err == nil {
		t.Fatalf("the compare found SRC and DST equal, comparing %d of %d bytes: DST's 4 MiB where SRC has a hole were never read",
			compared, job.Length)
	}
}

func writeAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
