package qcow2

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestHuffLiterals: clusters of every size, whose frames run to 16
// blocks, decode to what was compressed after huffLiterals, which codes
// the raw literals of some of them; qemu-img reads a 2 MiB-cluster image
// of them the same as its source.
func TestHuffLiterals(t *testing.T) {
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "src.raw")
	src := usedDiskRaw(t, srcPath, 8<<20, 3)
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	for _, cs := range []int{512, 4 << 10, 64 << 10, 256 << 10, 2 << 20} {
		t.Run(fmt.Sprint(cs), func(t *testing.T) {
			c, err := zstdCompressor(int64(cs))
			if err != nil {
				t.Fatal(err)
			}
			e := c.(zstdEnc).e
			recoded := 0
			for off := 0; off < len(src); off += cs {
				cl := src[off : off+cs]
				out, _ := c.compress(nil, cl)
				if plain := e.EncodeAll(cl, nil); len(out) < len(plain) {
					recoded++
				} else if !bytes.Equal(out, plain) {
					t.Fatalf("cluster at %d: a frame no smaller than the library's differs from it", off)
				}
				got, err := dec.DecodeAll(out, nil)
				if err != nil || !bytes.Equal(got, cl) {
					t.Fatalf("cluster at %d: decodes to %d bytes (%v), not what was compressed", off, len(got), err)
				}
			}
			t.Logf("%d of %d clusters recoded", recoded, len(src)/cs)
			if cs >= 64<<10 && recoded == 0 {
				t.Errorf("no cluster recoded")
			}
		})
	}
	t.Run("qemu", func(t *testing.T) {
		needQemu(t)
		img := filepath.Join(dir, "new.qcow2")
		writeInOrder(t, img, src, WriterOptions{ClusterSize: 2 << 20, Compression: CompressZstd})
		qemuCheck(t, img)
		qemuCompare(t, srcPath, "raw", img, "qcow2")
	})
}
