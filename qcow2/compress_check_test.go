package qcow2

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ringcp/ringcp/internal/inflate"
)

// TestOwnEncodersChecked: a cluster our own encoders get wrong is not
// stored wrong: with deflateSmall and huffLiterals made to flip a bit of
// what they write, every cluster still decodes to what was compressed
// (it is stored as the library codes it).
func TestOwnEncodersChecked(t *testing.T) {
	src := usedDiskRaw(t, filepath.Join(t.TempDir(), "src.raw"), 2<<20, 4)
	flipped := func(enc func(dst, src []byte) []byte) func(dst, src []byte) []byte {
		return func(dst, src []byte) []byte {
			start := len(dst)
			out := enc(dst, src)
			if len(out) > start+2 {
				out[start+len(out[start:])/2] ^= 0x10
			}
			return out
		}
	}
	defer func(d, l func(dst, src []byte) []byte) { ownDeflate, ownLiterals = d, l }(ownDeflate, ownLiterals)
	ownDeflate, ownLiterals = flipped(deflateSmall), flipped(huffLiterals)

	t.Run("zlib", func(t *testing.T) {
		for _, cs := range []int{512, 4 << 10, 32 << 10} {
			for off := 0; off < len(src); off += cs {
				cl := src[off : off+cs]
				out, err := deflater{}.compress(nil, cl)
				got := make([]byte, cs)
				if err != nil || inflate.DecodeWhole(got, out) != nil || !bytes.Equal(got, cl) {
					t.Fatalf("cluster size %d at %d: stored wrong (%v)", cs, off, err)
				}
			}
		}
	})
	t.Run("zstd", func(t *testing.T) {
		dec, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		c, err := zstdCompressor(64 << 10)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(src); off += 64 << 10 {
			cl := src[off : off+64<<10]
			out, _ := c.compress(nil, cl)
			if got, err := dec.DecodeAll(out, nil); err != nil || !bytes.Equal(got, cl) {
				t.Fatalf("cluster at %d: stored wrong (%v)", off, err)
			}
		}
	})
}
