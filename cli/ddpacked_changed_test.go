package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestDDCompressedSrcReplacedAfterEnd: the end packedEnd learnt of a
// compressed SRC is only as good as SRC stays. A SRC replaced by longer
// data after the end was learnt, before the copy opened it (a download
// still running, an image rewritten), was copied cut at the old end:
// the new data's first bytes, neither what SRC was nor what it is, with
// exit 0. The copy must fail, or copy the new data whole as dd would.
func TestDDCompressedSrcReplacedAfterEnd(t *testing.T) {
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src.gz"), filepath.Join(dir, "out.raw")
	short, long := bytes.Repeat([]byte("old!"), 16<<10), bytes.Repeat([]byte("new."), 256<<10)
	if err := os.WriteFile(src, gzipBytes(t, short), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := parseDD([]string{"if=" + src, "of=" + out, "bs=1M", "count=100", "status=none"})
	if err != nil {
		t.Fatal(err)
	}
	job, err := a.plan()
	if err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(dir, "next.gz")
	if err := os.WriteFile(next, gzipBytes(t, long), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, src); err != nil {
		t.Fatal(err)
	}
	ctx, sig := withSignals()
	defer sig.stop()
	_, err = job.run(ctx, sig, io.Discard)
	got, _ := os.ReadFile(out)
	if err == nil && !bytes.Equal(got, long) {
		t.Fatalf("SRC replaced by %d bytes after its end (%d) was learnt: exit 0 with %d bytes in DST, neither the old data nor the new", len(long), len(short), len(got))
	}
}
