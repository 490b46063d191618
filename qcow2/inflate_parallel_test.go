package qcow2

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// meetDecompressor decompresses as dec does, but each call first waits
// (up to a minute) until another call runs at the same time: a read
// whose clusters are decompressed one after another never meets one.
type meetDecompressor struct {
	dec  decompressor
	once sync.Once
	met  chan struct{}
	mu   sync.Mutex
	in   int
}

func (m *meetDecompressor) decompress(dst, src []byte) error {
	m.mu.Lock()
	m.in++
	if m.in >= 2 {
		m.once.Do(func() { close(m.met) })
	}
	m.mu.Unlock()
	defer func() { m.mu.Lock(); m.in--; m.mu.Unlock() }()
	select {
	case <-m.met:
	case <-time.After(time.Minute):
		return errors.New("decompressed alone: no other cluster was decompressed meanwhile")
	}
	return m.dec.decompress(dst, src)
}

// TestReadOneRequestInflatesOnCores: one ReadAt of many compressed
// clusters, from one goroutine (the engine's window may keep only one
// request in flight), decompresses them on more than one core at once,
// and the bytes are qemu-img's, at cluster sizes and guest sizes that
// cut clusters, with and without an O_DIRECT view.
func TestReadOneRequestInflatesOnCores(t *testing.T) {
	needQemu(t)
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: there is no other to decompress on")
	}
	for _, s := range []shape{
		{"zstd/64k", converted(6<<20+4097, "-c", "-o", "compression_type=zstd")},
		{"zlib/64k", converted(5<<20+512, "-c", "-o", "compression_type=zlib")},
		{"zstd/4k", converted(3<<20+1, "-c", "-o", "compression_type=zstd,cluster_size=4k")},
		{"zlib/512", converted(1<<20+511, "-c", "-o", "compression_type=zlib,cluster_size=512")},
	} {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			img := s.make(t, dir)
			want := rawOf(t, img)
			for _, direct := range []bool{false, true} {
				im := openPath(t, img, Options{})
				if direct {
					d, err := os.OpenFile(img, os.O_RDONLY|unix.O_DIRECT, 0)
					if err != nil {
						t.Skipf("no O_DIRECT in %s: %v", filepath.Dir(img), err)
					}
					defer d.Close()
					im.SetDirect(d, 4096)
				}
				im.dec = &meetDecompressor{dec: im.dec, met: make(chan struct{})}
				got := alignedBuf(len(want), 4096)
				if n, err := im.ReadAt(got, 0); n != len(want) || err != nil {
					t.Fatalf("direct %v: ReadAt: %d, %v", direct, n, err)
				}
				sameBytes(t, "one read of the whole guest", got, want)
				// Reads that start and end inside clusters.
				for _, r := range [][2]int64{{4097, 2<<20 + 3}, {511, 65537}, {1<<20 - 1, 1<<20 + 2}} {
					off, n := r[0], min(r[1], int64(len(want))-r[0])
					p := got[:n]
					if _, err := im.ReadAt(p, off); err != nil {
						t.Fatalf("direct %v: ReadAt(%d bytes at %d): %v", direct, n, off, err)
					}
					sameBytes(t, "a read that cuts clusters", p, want[off:off+n])
				}
			}
		})
	}
}

// TestInflateAllFirstError: of clusters that fail, the error is the
// first one's, as a read in order would meet it, and every cluster
// before it was decompressed.
func TestInflateAllFirstError(t *testing.T) {
	for range 50 {
		var mu sync.Mutex
		done := map[int]bool{}
		err := inflateAll(64, func(i int) error {
			if i == 20 || i == 40 {
				return errors.New(map[int]string{20: "first", 40: "later"}[i])
			}
			mu.Lock()
			done[i] = true
			mu.Unlock()
			return nil
		})
		if err == nil || err.Error() != "first" {
			t.Fatalf("inflateAll: %v, want the first cluster's error", err)
		}
		for i := range 20 {
			if !done[i] {
				t.Fatalf("cluster %d, before the one that failed, was not decompressed", i)
			}
		}
	}
}
