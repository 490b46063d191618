package copier_test

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
)

// TestNeighbourAloneCompressedImage: a default copy of a compressed
// qcow2 image of a used disk on a loop device that nothing else uses,
// onto another: the watcher must count the copy's writes to DST as its
// own. It counted the bytes done in requests of a MiB, while a chunk
// whose runs of zeros are left as holes is written in as many pieces as
// it has runs of data (16 KiB runs here, as on the bench's disk): it
// took its own writes for others' and cut the window to a MiB while the
// copy was alone. The copy is exact, byte for byte against the raw
// disk qemu-img converted.
func TestNeighbourAloneCompressedImage(t *testing.T) {
	blocktest.NeedRoot(t)
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skipf("qemu-img is not installed (Debian: qemu-utils): %v", err)
	}
	const size = 256 << 20 // several of the watcher's ticks (samePrefix compares whole 4 MiB)
	dir := privateTmpfs(t, 3*size+64<<20)
	raw := filepath.Join(dir, "guest.raw")
	writeUsedDisk(t, raw, size)
	img := filepath.Join(dir, "img.qcow2")
	blocktest.Run(t, "qemu-img", "convert", "-f", "raw", "-O", "qcow2", "-c", "-o", "compression_type=zstd", raw, img)
	// A loop device ends at the last whole sector of its file: the
	// image's last compressed cluster may end after it.
	st, err := os.Stat(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, (st.Size()+4095)&^4095); err != nil {
		t.Fatal(err)
	}
	src := blocktest.Loop(t, img, "--read-only")
	dstFile := filepath.Join(dir, "dst")
	if err := os.WriteFile(dstFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(dstFile, size); err != nil {
		t.Fatal(err)
	}
	dst := blocktest.Loop(t, dstFile)
	p, err := copier.Prepare(copier.Options{Src: src, SrcFormat: copier.FormatQcow2, Dst: dst})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	samePrefix(t, raw, dst, size)
	wantAlone(t, p, rep)
}

// writeUsedDisk writes size bytes as a used filesystem holds them, in
// 16 KiB runs: text that compresses, bytes that do not (a compressor
// stores such a cluster as it is) and zeros, so that an image of it has
// compressed clusters and stored ones side by side.
func writeUsedDisk(t *testing.T, path string, size int64) {
	t.Helper()
	g := rand.New(rand.NewPCG(24, 1))
	words := []string{"qcow2 ", "cluster ", "the ", "guest ", "reads ", "4096 ", "\n", "image ", "of ", "a "}
	buf := make([]byte, 0, size)
	for int64(len(buf)) < size {
		run := make([]byte, 16<<10)
		switch g.IntN(8) {
		case 0, 1: // incompressible
			for i := range run {
				run[i] = byte(g.Uint32())
			}
		case 2: // zeros
		default:
			for i := 0; i < len(run); {
				i += copy(run[i:], words[g.IntN(len(words))])
			}
		}
		buf = append(buf, run...)
	}
	if err := os.WriteFile(path, buf[:size], 0o600); err != nil {
		t.Fatal(err)
	}
}
