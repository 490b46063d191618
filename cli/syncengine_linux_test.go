package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/synctest"
)

// A push reads the SRC that blocksync opened and checked (its locks,
// its image refusal, its size): a file swapped in at the name between
// that open and the engine's is refused, never read in its place. It
// was read: the engine opened SRC again by name.
func TestPushReadsTheCheckedSrc(t *testing.T) {
	d := t.TempDir()
	path, other := filepath.Join(d, "src"), filepath.Join(d, "other")
	const size = 1<<20 + 3
	checked, swapped := synctest.Random(1, size), synctest.Random(2, size)
	synctest.WriteFile(t, path, checked)
	synctest.WriteFile(t, other, swapped)
	f, err := blocksync.OpenSource(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil { // the name now holds another file
		t.Fatal(err)
	}
	each := copier.EachOptions{ReadOptions: copier.ReadOptions{Progress: &engine.Progress{}, SrcFormat: copier.FormatRaw}}
	src, err := newEngineSource(context.Background(), f, each)
	if err != nil {
		f.Close()
		var re *copier.RefusedError
		if !errors.As(err, &re) || re.Kind != copier.KindChanged {
			t.Fatalf("got %v, want a refusal of kind %v", err, copier.KindChanged)
		}
		return
	}
	defer src.Close()
	got := make([]byte, size)
	for off := 0; off < size; off += eachWindow {
		if n, err := src.ReadAt(got[off:min(off+eachWindow, size)], int64(off)); err != nil && err != io.EOF {
			t.Fatalf("read %d at %d: %v", n, off, err)
		}
	}
	if !bytes.Equal(got, checked) {
		t.Fatalf("the push read the file swapped in at SRC's name (same as it: %v), not the one checked", bytes.Equal(got, swapped))
	}
}
