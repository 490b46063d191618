package qcow2

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
)

// memFile is an image in memory that reports any read outside it.
type memFile struct {
	b   []byte
	bad atomic.Value // the first read outside the file, as a string
}

func (m *memFile) Name() string         { return "fuzz.qcow2" }
func (m *memFile) Size() (int64, error) { return int64(len(m.b)), nil }

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(m.b)) || int64(len(p)) > int64(len(m.b))-off {
		m.bad.CompareAndSwap(nil, fmt.Sprintf("read of %d bytes at %d, file of %d", len(p), off, len(m.b)))
		return 0, errors.New("read outside the file")
	}
	return copy(p, m.b[off:]), nil
}

// FuzzOpen: whatever the bytes, Open, Inspect, ReadAt and Map never
// panic, never read outside the file, and allocate in proportion to it.
// The seeds are small real images (testdata/, made by qemu-img: 512-byte
// clusters v2 and v3, zlib and zstd, extended L2 entries, an overlay).
func FuzzOpen(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.qcow2")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m := &memFile{b: b}
		for _, lazy := range []bool{false, true} {
			im, err := Open(m, Options{Lazy: lazy, CacheBytes: 1 << 20})
			if err != nil {
				continue
			}
			readSome(im)
			im.Close()
		}
		Inspect(m, InspectOptions{})
		if bad := m.bad.Load(); bad != nil {
			t.Fatalf("read outside the file: %s", bad)
		}
		runtime.ReadMemStats(&after)
		// The bound is loose: the cache budget, decoders, a cluster or
		// two, and tables no larger than the file, many times over.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64<<20+64*len(b)); got > limit {
			t.Fatalf("allocated %d bytes for a file of %d", got, len(b))
		}
	})
}

// readSome reads the start and end of the image and maps its first
// 64 MiB (a fuzzed size may be huge).
func readSome(im *Image) {
	p := make([]byte, 256<<10)
	im.ReadAt(p, 0)
	im.ReadAt(p, max(0, im.Size()-int64(len(p))))
	im.ReadAt(p[:1000], im.Size()/2+7)
	im.Map(0, min(im.Size(), 64<<20))
	im.Data(0, im.Size())
}

// TestSeeds: the fuzz seeds read as qemu-img reads them.
func TestSeeds(t *testing.T) {
	needQemu(t)
	seeds, _ := filepath.Glob("testdata/*.qcow2")
	if len(seeds) == 0 {
		t.Fatal("no seed images in testdata")
	}
	for _, s := range seeds {
		im := openPath(t, s, Options{})
		want := rawOf(t, s)
		checkRead(t, im, want)
		checkMap(t, im, s, want)
	}
}
