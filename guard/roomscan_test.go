package guard

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestNonZeroSampled: 80 MiB alternating 1 MiB of zeros and 1 MiB of
// noise, more than is read whole, is estimated at half within the margin;
// the same data in one extent of 48 MiB is counted exactly.
func TestNonZeroSampled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "half")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rand.New(rand.NewPCG(1, 2))
	chunk := make([]byte, 1<<20)
	for i := range 80 {
		for j := range chunk {
			chunk[j] = 0
			if i%2 == 1 {
				chunk[j] = byte(r.Uint32() | 1)
			}
		}
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	got, err := NonZero(f, Extents{{0, 80 << 20}}, 80<<20, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Sampled || got.Need < 40<<20-got.Margin || got.Need > 40<<20+got.Margin {
		t.Errorf("sampled: need %d, margin %d, want 40 MiB within it", got.Need, got.Margin)
	}
	got, err = NonZero(f, Extents{{0, 48 << 20}}, 48<<20, 4096)
	if err != nil || got.Sampled || got.Need != 24<<20 {
		t.Errorf("read whole: %+v, %v; want exactly 24 MiB", got, err)
	}
}

// TestCursorWalksExtents: data positions map into the right extent.
func TestCursorWalksExtents(t *testing.T) {
	c := cursor{ext: Extents{{100, 10}, {500, 5}, {1000, 20}}}
	for _, tc := range []struct{ pos, off, n int64 }{{0, 100, 8}, {9, 109, 1}, {10, 500, 5}, {14, 504, 1}, {15, 1000, 8}, {34, 1019, 1}} {
		if off, n := c.at(tc.pos, 8); off != tc.off || n != tc.n {
			t.Errorf("at(%d) = %d, %d; want %d, %d", tc.pos, off, n, tc.off, tc.n)
		}
	}
}
