package copier_test

import (
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// Under a cap a copy keeps no more buffers than a second of the cap
// fills, two blocks at least (share.go's rule of the capped buffers):
// --max-rate 4M mapped 8 x 1 MiB, where its requests are 100 KiB.

// capMemRate is --max-rate 4M; capMemMost the most buffer bytes it may
// map (a second of it), capMemLeast the least (two blocks of a MiB,
// which a lifted cap moves whole).
const (
	capMemRate  = 4 << 20
	capMemMost  = capMemRate
	capMemLeast = 2 << 20
)

// TestCapBuffersSingle: a copy of 64 MiB (eight blocks of no cap) under a 4 MiB/s cap maps at
// most 4 MiB of buffers, in blocks of a MiB at least; lifted once it read
// its first request, it completes. Both engines.
func TestCapBuffersSingle(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			want := randomBytes(64<<20, 71)
			o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), Engine: eng, MaxRate: capMemRate, Progress: &engine.Progress{}}
			writeFile(t, o.Src, want)
			p, err := copier.Prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			rep := runLifted(t, o.Progress.Read.Load, p.SetMaxRate, p.Run)
			compareFile(t, o.Dst, want)
			if n := rep.QueueDepth * rep.BlockSize; n > capMemMost || n < capMemLeast || rep.BlockSize < liftBlock {
				t.Errorf("under a 4 MiB/s cap: %d x %d buffers (%d bytes); want %d to %d bytes, blocks of %d at least",
					rep.QueueDepth, rep.BlockSize, n, capMemLeast, capMemMost, liftBlock)
			}
		})
	}
}

// TestCapBuffersBatch: the same for a batch of two 8 MiB jobs under a
// shared 4 MiB/s cap (BatchOptions.MaxRate, as --jobs --max-rate).
func TestCapBuffersBatch(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			jobs := fileJobs(t, t.TempDir(), 8<<20, 8<<20)
			read := withProgress(jobs)
			b := prepareBatch(t, jobs, copier.BatchOptions{MaxRate: capMemRate}, func(o *copier.Options) { o.Engine = eng })
			rep := runLifted(t, read, b.SetMaxRate, b.Run)
			for _, j := range jobs {
				compareFile(t, j.opts.Dst, j.want)
			}
			if n := rep.Slots * rep.BlockSize; n > capMemMost || n < capMemLeast || rep.BlockSize < liftBlock {
				t.Errorf("under a shared 4 MiB/s cap: %d x %d buffers (%d bytes); want %d to %d bytes, blocks of %d at least",
					rep.Slots, rep.BlockSize, n, capMemLeast, capMemMost, liftBlock)
			}
		})
	}
}
