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

// TestDeflateHashInRange: every 3-byte prefix hashes into the head table.
// The hash was made an int before its shift, negative on 32-bit platforms
// for half the prefixes: deflateSmall panicked there (index out of range)
// on the first cluster with a repeated 3 bytes, crashing a zlib write
// (GOARCH=arm go test -exec qemu-arm -run TestDeflate ./qcow2).
func TestDeflateHashInRange(t *testing.T) {
	var p [3]byte
	for v := range 1 << 24 {
		p[0], p[1], p[2] = byte(v>>16), byte(v>>8), byte(v)
		if h := dHash(p[:]); h < 0 || h >= 1<<dHashBits {
			t.Fatalf("prefix %x hashes to %d, outside [0, %d)", p, h, 1<<dHashBits)
		}
	}
}
