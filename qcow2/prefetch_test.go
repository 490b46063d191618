package qcow2

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// announcing is a file that records what Open announced and which reads
// of more than a few bytes were announced before they came.
type announcing struct {
	*os.File
	mu        sync.Mutex
	announced map[int64]int64
	unasked   []Range // metadata reads not announced first
}

func (a *announcing) Prefetch(ranges []Range) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range ranges {
		a.announced[r.Off] = max(a.announced[r.Off], r.Len)
	}
}

func (a *announcing) ReadAt(p []byte, off int64) (int, error) {
	a.mu.Lock()
	if off != 0 && int64(len(p)) > a.announced[off] {
		a.unasked = append(a.unasked, Range{off, int64(len(p))})
	}
	a.mu.Unlock()
	return a.File.ReadAt(p, off)
}

// TestPrefetchAnnouncesTables: Open announces the L1 table, the refcount
// table and every L2 table before it reads them, checked or lazy, so a
// transport where each read is a round trip fetches them at once.
func TestPrefetchAnnouncesTables(t *testing.T) {
	needQemu(t)
	img := filepath.Join(t.TempDir(), "img.qcow2")
	qemuImg(t, "create", "-q", "-f", "qcow2", "-o", "cluster_size=512", img, "2m")
	qemuIO(t, "qcow2", img, "write -P 3 0 100k", "write -P 4 1m 64k", "write -z 1500k 8k")
	for _, lazy := range []bool{false, true} {
		f, err := os.Open(img)
		if err != nil {
			t.Fatal(err)
		}
		a := &announcing{File: f, announced: map[int64]int64{}}
		im, err := Open(a, Options{Lazy: lazy})
		if err != nil {
			t.Fatal(err)
		}
		// A lazy Open reads the tables as the map walks them.
		if _, _, err := im.Data(0, im.Size()); err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off < im.Size(); {
			e, err := im.Extent(off, im.Size())
			if err != nil {
				t.Fatal(err)
			}
			off += e.Len
		}
		tables := 0
		for _, e := range im.l1 {
			if e&entryOffsetMask != 0 {
				tables++
			}
		}
		if tables < 2 || len(a.announced) < tables+2 {
			t.Fatalf("lazy %v: %d L2 tables, %d ranges announced", lazy, tables, len(a.announced))
		}
		if len(a.unasked) > 0 {
			t.Fatalf("lazy %v: metadata read without being announced: %v", lazy, a.unasked)
		}
		im.Close()
		f.Close()
	}
}
