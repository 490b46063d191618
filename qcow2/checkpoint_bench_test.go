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
// Between two checkpoints the entries of 4 L2 tables change (2 GiB of
// guest data at 64 KiB clusters: a barrier's worth at 1 GB/s). The data
// is not written: only the metadata's cost is measured.
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
			b.ResetTimer()
			for n := range b.N {
				w.mu.Lock()
				for k := range int64(4) {
					ci := (int64(n)*4 + k) * w.l2n % clusters
					w.setEntryLocked(ci, w.l2[ci/w.l2n][ci%w.l2n])
				}
				w.mu.Unlock()
				if err := w.Checkpoint(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
