package enginetest

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
)

// SharedBudget runs several copies at once, each on its own goroutine and
// backend, sharing one engine.Budget of slots (ringcp --jobs). Every copy
// must be exact, and a small copy started beside big ones must finish
// first: fair shares keep the big ones from taking every slot.
func SharedBudget(t *testing.T, tg Target) {
	const bs = 64 << 10
	bufs, err := align.AllocBuffers(4, bs)
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Free()
	budget := engine.NewBudget(bufs.Slots)
	sizes := []int64{48 << 20, 48<<20 + 5, 1<<20 + 3}
	dir := t.TempDir()
	ended := make([]time.Time, len(sizes))
	var wg sync.WaitGroup
	start := make(chan struct{}) // every file is written before any copy starts
	for i, size := range sizes {
		src := RandomBytes(size, uint64(i)+40)
		srcPath, dstPath := filepath.Join(dir, fmt.Sprint("src", i)), filepath.Join(dir, fmt.Sprint("dst", i))
		writeFile(t, srcPath, src)
		job, cleanup := NewJob(t, srcPath, dstPath, true, bs, 1)
		job.Budget, job.Length, job.FinalSize, job.CutBackOnStop = budget, size, size, true
		tg.serve(t, &job)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cleanup()
			<-start
			if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
				t.Errorf("copy %d: %v", i, err)
				return
			}
			ended[i] = time.Now()
			CompareFile(t, dstPath, src)
		}()
	}
	close(start)
	wg.Wait()
	small := ended[len(sizes)-1]
	for i := range sizes[:len(sizes)-1] {
		if !small.Before(ended[i]) {
			t.Errorf("the 1 MiB copy ended after the 48 MiB copy %d: starved", i)
		}
	}
	if budget.Depth() != 4 {
		t.Errorf("budget depth %d after the copies, want 4", budget.Depth())
	}
}
