package copier_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// TestQcow2DstCompressedPartialClusters: a sparse SRC with a little data
// in every cluster (a guest's scattered 4 KiB writes) made into a
// compressed image: the clusters SRC has in part are finished as the copy
// goes, not held in memory until its end (a cluster each: here 256 MiB).
func TestQcow2DstCompressedPartialClusters(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	const size, every = 256 << 20, 64 << 10
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	blk := randomBytes(4096, 5)
	for off := int64(0); off < size; off += every {
		if _, err := f.WriteAt(blk, off+8192); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	dst := filepath.Join(dir, "out.qcow2")
	var err2 error
	peak := heapPeak(func() {
		_, err2 = copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, DstFormat: copier.FormatQcow2,
			Qcow2: copier.Qcow2Options{Compress: "zstd"}})
	})
	if err2 != nil {
		t.Fatal(err2)
	}
	if peak > 96<<20 {
		t.Errorf("the copy's heap grew by %d MiB for %d clusters of SRC's", peak>>20, size/every)
	}
	qemu(t, "qemu-img", "check", "-q", dst)
	qemu(t, "qemu-img", "compare", "-q", "-f", "raw", "-F", "qcow2", src, dst)
}

// heapPeak is how far the heap in use grew over its start while fn ran,
// sampled every few milliseconds.
func heapPeak(fn func()) uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	done := make(chan struct{})
	go func() {
		fn()
		close(done)
	}()
	for {
		select {
		case <-done:
			return peak - base
		case <-time.After(5 * time.Millisecond):
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
}
