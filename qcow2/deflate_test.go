package qcow2

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/inflate"
)

// TestDeflateSmall: deflateSmall's streams inflate to their input, end
// where its last byte is made (what QEMU's inflate needs: the cluster's
// next bytes follow), and read the same through the standard library,
// for sizes from 1 byte to 32 KiB of every kind: zeros, one byte
// repeated, random (fixed blocks), text and the bench disk's layout.
func TestDeflateSmall(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	disk := usedDiskRaw(t, filepath.Join(t.TempDir(), "src.raw"), 4<<20, 2)
	kinds := map[string]func(n int) []byte{
		"zeros": func(n int) []byte { return make([]byte, n) },
		"one":   func(n int) []byte { return bytes.Repeat([]byte{0x5a}, n) },
		"random": func(n int) []byte {
			b := make([]byte, n)
			rng.Read(b)
			return b
		},
		"text": func(n int) []byte {
			b := make([]byte, n)
			for i := range b {
				b[i] = "the quick brown fox "[rng.Intn(20)]
			}
			return b
		},
		"disk": func(n int) []byte {
			off := rng.Intn(len(disk) - n)
			return disk[off : off+n]
		},
	}
	for name, gen := range kinds {
		for _, n := range []int{1, 2, 3, 4, 258, 259, 511, 512, 4096, 4097, 32 << 10} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				for range 8 {
					src := gen(n)
					out := deflateSmall(nil, src)
					got := make([]byte, n)
					if err := inflate.DecodeWhole(got, out); err != nil || !bytes.Equal(got, src) {
						t.Fatalf("DecodeWhole: %v (same %v)", err, bytes.Equal(got, src))
					}
					std, err := io.ReadAll(flate.NewReader(bytes.NewReader(out)))
					if err != nil || !bytes.Equal(std, src) {
						t.Fatalf("compress/flate: %v (same %v)", err, bytes.Equal(std, src))
					}
				}
			})
		}
	}
}
