package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/synctest"
)

// A push's SRC lends its whole windows in place and reads the rest
// into the caller's buffer: every byte of SRC comes out once, the same
// either way, at the awkward sizes; a range that is not one whole
// window is not lent; lent buffers come back for later windows.
func TestEngineSourceLends(t *testing.T) {
	for _, size := range []int64{1, 4096 + 511, eachWindow, 3*eachWindow + 4097, 5*eachWindow - 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "src")
			want := synctest.Random(uint64(size), size)
			synctest.WriteFile(t, path, want)
			f, err := blocksync.OpenSource(path)
			if err != nil {
				t.Fatal(err)
			}
			src, err := newEngineSource(context.Background(), f, copier.EachOptions{ReadOptions: copier.ReadOptions{Progress: &engine.Progress{}, SrcFormat: copier.FormatRaw}})
			if err != nil {
				f.Close()
				t.Fatal(err)
			}
			defer src.Close()
			if _, _, ok, err := src.Lend(1, 4096); ok || err != nil {
				t.Fatalf("lent an unaligned range: %v %v", ok, err)
			}
			got := make([]byte, 0, size)
			for off, i := int64(0), 0; off < size; off, i = off+eachWindow, i+1 {
				n := min(eachWindow, size-off)
				if i%2 == 1 { // every other window read, not lent
					p := make([]byte, n)
					if k, err := src.ReadAt(p, off); int64(k) != n || (err != nil && err != io.EOF) {
						t.Fatalf("read %d at %d: %v", k, off, err)
					}
					got = append(got, p...)
					continue
				}
				p, release, ok, err := src.Lend(off, n)
				if !ok || err != nil || int64(len(p)) != n {
					t.Fatalf("lend [%d, +%d): %d bytes, %v, %v", off, n, len(p), ok, err)
				}
				got = append(got, p...)
				release()
			}
			synctest.SameBytes(t, "SRC as lent and read", got, want)
		})
	}
}
