package qcow2

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// mixedRaw writes a source of size bytes whose clusters mix runs of
// incompressible bytes (packages, media) with runs that compress (code
// and text: a skewed alphabet, and repeats of what came shortly before),
// each run 512 bytes to 24 KiB: a filesystem's small files, packed
// together, as a cluster holds them. A deflater that codes a whole
// 64 KiB cluster as one block, with one Huffman code, does worse on them
// than zlib, which ends a block every 32 Ki symbols and picks for each
// one a stored, fixed or dynamic block.
func mixedRaw(t testing.TB, path string, size, seed int64) []byte {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	const alphabet = "\x00\x00\x00\x00\xff\xff\x48\x48\x89\x8b\xe8\x0f\x85\x74\xeb\xc3eatinos \n"
	b := make([]byte, size)
	for off := 0; off < len(b); {
		run := b[off:min(len(b), off+512+rng.Intn(24<<10))]
		if rng.Intn(2) == 0 {
			rng.Read(run)
		} else {
			for i := range run {
				if i > 64 && rng.Intn(8) == 0 {
					n := min(len(run)-i, 4+rng.Intn(16))
					copy(run[i:i+n], run[i-1-rng.Intn(i-n):])
				}
				run[i] = alphabet[rng.Intn(len(alphabet))]
			}
		}
		off += len(run)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// writeInOrder writes src through a Writer on path in 1 MiB chunks, in
// order, from one goroutine: compressed clusters are then packed the same
// way each run (from many goroutines, the order of writes moves a cluster
// or two of packing room), so the image's size is the same each run.
func writeInOrder(t testing.TB, path string, src []byte, opt WriterOptions) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt.Size = int64(len(src))
	w, err := Create(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(src); off += 1 << 20 {
		if _, err := w.WriteAt(src[off:min(len(src), off+1<<20)], int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWriterNoLargerMixed: on clusters that mix incompressible and
// compressible runs, compressed images are no larger than qemu-img
// convert -c makes of the same source at the same cluster size (the
// target of issue 24), and read back the same. The sizes are the same
// each run (writeInOrder; qemu-img's are).
func TestWriterNoLargerMixed(t *testing.T) {
	needQemu(t)
	for _, cs := range []int64{4 << 10, 64 << 10} {
		for _, comp := range []Compression{CompressZlib, CompressZstd} {
			t.Run(fmt.Sprintf("cs=%d/%s", cs, comp), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				srcPath := filepath.Join(dir, "src.raw")
				src := mixedRaw(t, srcPath, 16<<20, 5)
				img := filepath.Join(dir, "new.qcow2")
				writeInOrder(t, img, src, WriterOptions{ClusterSize: cs, Compression: comp})
				qemuCheck(t, img)
				qemuCompare(t, srcPath, "raw", img, "qcow2")
				ref := filepath.Join(dir, "qemu.qcow2")
				qemuImg(t, "convert", "-c", "-O", "qcow2", "-o",
					fmt.Sprintf("cluster_size=%d,compression_type=%s", cs, comp), srcPath, ref)
				got, want := fileSize(t, img), fileSize(t, ref)
				t.Logf("%d bytes, qemu-img convert's %d (%.4f)", got, want, float64(got)/float64(want))
				if got > want {
					t.Errorf("the image takes %d bytes, qemu-img convert's %d", got, want)
				}
			})
		}
	}
}
