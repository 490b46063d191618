package qcow2

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCheckpoint is what one checkpoint of a checkpointing Writer
// costs (tables and refcounts written, two syncs) for an image whose
// every cluster is allocated: the tables are then as large as they get
// (1/8192 of the virtual size at 64 KiB clusters, plus the refcounts).
// The data is not written: only the metadata's cost is measured.
func BenchmarkCheckpoint(b *testing.B) {
	for _, size := range []int64{1 << 30, 16 << 30, 128 << 30} {
		b.Run(fmt.Sprintf("%dGiB", size>>30), func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "img.qcow2"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			w, err := Create(f, WriterOptions{Size: size, Checkpoints: true})
			if err != nil {
				b.Fatal(err)
			}
			clusters := size / w.cs
			w.mu.Lock()
			host := w.allocClusters(clusters)
			for ci := range clusters {
				w.setEntryLocked(ci, uint64(host+ci*w.cs)|entryCopied)
			}
			w.mu.Unlock()
			b.SetBytes(ceilDiv(clusters, w.l2n)*w.cs + clusters*2)
			b.ResetTimer()
			for range b.N {
				if err := w.Checkpoint(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
