package zeros

import "testing"

// TestIs: every length up to past two pages, all zeros or with one
// non-zero byte at the start, in the middle or at the end.
func TestIs(t *testing.T) {
	for _, n := range []int{0, 1, 511, 4097, 64 << 10, 64<<10 + 1, 128<<10 + 3} {
		b := make([]byte, n)
		if !Is(b) {
			t.Fatalf("%d zeros: not zero", n)
		}
		for _, at := range []int{0, n / 2, n - 1} {
			if n == 0 {
				continue
			}
			b[at] = 1
			if Is(b) {
				t.Errorf("%d bytes with a 1 at %d: zero", n, at)
			}
			b[at] = 0
		}
	}
}

func BenchmarkIs(b *testing.B) {
	buf := make([]byte, 8<<20)
	b.SetBytes(int64(len(buf)))
	for range b.N {
		Is(buf)
	}
}
