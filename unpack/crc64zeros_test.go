package unpack

import (
	"hash/crc64"
	"math/rand/v2"
	"testing"
)

// TestCRC64Zeros: the CRC with zero runs added by matrices is
// hash/crc64's, for zeros, data and mixtures at awkward lengths, written
// in pieces of awkward sizes.
func TestCRC64Zeros(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 511, 4095, 4096, 4097, 1<<20 + 3, 5<<20 + 17} {
		for _, shape := range []string{"zeros", "data", "mixed"} {
			b := make([]byte, n)
			for i := range b {
				switch {
				case shape == "data", shape == "mixed" && (i/5000)%3 == 1:
					b[i] = byte(r.Uint32())
				}
			}
			want := crc64.Checksum(b, crc64Table)
			for _, piece := range []int{1 << 30, 4096, 7, 100_003} {
				var c crc64Zeros
				for rest := b; len(rest) > 0; {
					k := min(len(rest), piece)
					c.Write(rest[:k])
					rest = rest[k:]
				}
				if got := c.Sum64(); got != want {
					t.Fatalf("%d bytes (%s) in pieces of %d: %#x, want %#x", n, shape, piece, got, want)
				}
			}
		}
	}
}
