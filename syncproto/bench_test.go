package syncproto

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/synctest"
)

// BenchmarkPush pushes a 64 MiB file with 1% of its granules changed
// onto its old version over an in-process connection, both in the page
// cache: the protocol's own cost (both sides hash every granule; the
// changed ones cross), per algorithm. bench/ measures it over ssh.
func BenchmarkPush(b *testing.B) {
	const size, g = 64 << 20, 64 << 10
	dir := b.TempDir()
	old := synctest.Random(2, size)
	src := append([]byte{}, old...)
	r := rand.New(rand.NewPCG(1, 1))
	for range size / g / 100 {
		off := r.Int64N(size/g) * g
		copy(src[off:], synctest.Random(uint64(off), g))
	}
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.WriteFile(srcPath, src, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, alg := range blocksync.Algorithms {
		b.Run(alg.String(), func(b *testing.B) {
			b.SetBytes(size)
			var sent int64
			for range b.N {
				b.StopTimer()
				if err := os.WriteFile(dstPath, old, 0o644); err != nil {
					b.Fatal(err)
				}
				f, err := blocksync.OpenSource(srcPath)
				if err != nil {
					b.Fatal(err)
				}
				c, s := pipes()
				done := make(chan error, 1)
				go func() {
					_, err := Serve(context.Background(), s, func() { s.Close() }, ServeOptions{})
					done <- err
				}()
				b.StartTimer()
				res, err := Push(context.Background(), c, f, dstPath, Options{Digest: alg})
				if err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				f.Close()
				sent = res.Sent
			}
			b.ReportMetric(float64(sent)/float64(size)*100, "%sent")
		})
	}
}
