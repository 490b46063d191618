package copier_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// sparseImage makes a qcow2 image of size bytes as the bench's
// qcow2-native workload has it: a raw disk with a sixteenth of data in
// extents of 4 KiB to 1 MiB at random places, converted by qemu-img.
func sparseQcow2(b testing.TB, dir string, size int64, opts ...string) string {
	b.Helper()
	raw := filepath.Join(dir, "sparse.raw")
	f, err := os.Create(raw)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := randomBytes(1<<20, 3)
	for got := int64(0); got < size/16; {
		n := (rng.Int64N(1<<20) + 4096) &^ 4095
		off := rng.Int64N(size-n) &^ 4095
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			b.Fatal(err)
		}
		got += n
	}
	img := filepath.Join(dir, "sparse.qcow2")
	args := append([]string{"convert", "-q", "-f", "raw", "-O", "qcow2"}, opts...)
	qemu(b, "qemu-img", append(args, raw, img)...)
	return img
}

// BenchmarkQcow2Import copies a 1 GiB sparse qcow2 image (64 MiB of
// data) to a new raw file, as the bench's qcow2-native workload does:
// for CPU profiles of the image layer (go test -run - -bench
// Qcow2Import -cpuprofile), not for timings, which the bench takes.
func BenchmarkQcow2Import(b *testing.B) {
	qemutest.Need(b, "qemu-img")
	dir := b.TempDir()
	for _, c := range []struct{ name, opts string }{{"plain", ""}, {"zstd", "-c"}} {
		var opts []string
		if c.opts != "" {
			opts = append(opts, c.opts, "-o", "compression_type=zstd")
		}
		img := sparseQcow2(b, filepath.Join(dir), 1<<30, opts...)
		b.Run(c.name, func(b *testing.B) {
			dst := filepath.Join(dir, "out.raw")
			b.SetBytes(1 << 30)
			for range b.N {
				os.Remove(dst)
				if _, err := copier.Copy(context.Background(), copier.Options{Src: img, Dst: dst}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
