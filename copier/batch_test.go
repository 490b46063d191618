package copier_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// Batches (ringcp --jobs): several copies in one process on one budget of
// buffers. Every job byte for byte, both engines; the budget that of one
// copy; fair shares; the limit on jobs at once; a cancelled batch.

// batchJob is one job of a test batch and the bytes its DST must hold.
type batchJob struct {
	opts copier.Options
	want []byte
}

// fileJobs makes one new-file job per size in dir.
func fileJobs(t *testing.T, dir string, sizes ...int64) []batchJob {
	t.Helper()
	jobs := make([]batchJob, len(sizes))
	for i, size := range sizes {
		src, dst := filepath.Join(dir, fmt.Sprint("src", i)), filepath.Join(dir, fmt.Sprint("dst", i))
		jobs[i].want = randomBytes(size, uint64(size)+uint64(i))
		writeFile(t, src, jobs[i].want)
		jobs[i].opts = copier.Options{Src: src, Dst: dst}
	}
	return jobs
}

// runBatch prepares and runs jobs with common options applied to each.
func runBatch(t *testing.T, ctx context.Context, jobs []batchJob, bo copier.BatchOptions, common func(*copier.Options)) (copier.BatchReport, error) {
	t.Helper()
	return prepareBatch(t, jobs, bo, common).Run(ctx)
}

// TestBatchCopies: awkward sizes, a range into an existing file, and two
// loop devices (512 and 4096 byte sectors), in one batch, each engine:
// every DST byte for byte, every job complete and synced.
func TestBatchCopies(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			jobs := fileJobs(t, dir, 0, 1, 511, 4097, 1<<20+3, 9<<20+5)
			jobs = append(jobs, rangeJob(t, dir))
			jobs = append(jobs, deviceJobs(t, dir)...)
			rep, err := runBatch(t, context.Background(), jobs, copier.BatchOptions{}, func(o *copier.Options) { o.Engine = eng })
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			wantEngine := map[copier.EngineChoice]string{copier.EngineUring: "io_uring", copier.EnginePool: "pool"}[eng]
			for i, j := range rep.Jobs {
				if j.Err != nil || !j.Started || !j.Synced || j.DstState != copier.DstComplete || j.Engine != wantEngine {
					t.Errorf("job %d: %+v", i+1, j)
				}
			}
			for _, j := range jobs[:len(jobs)-2] {
				compareFile(t, j.opts.Dst, j.want)
			}
			for _, j := range jobs[len(jobs)-2:] {
				compareDevicePrefix(t, j.opts.Dst, j.want)
			}
		})
	}
}

// rangeJob copies 100001 bytes from offset 4096 of a new SRC to offset
// 1 MiB of an existing 3 MiB file, which keeps the rest.
func rangeJob(t *testing.T, dir string) batchJob {
	src, dst := filepath.Join(dir, "range-src"), filepath.Join(dir, "range-dst")
	data, want := randomBytes(1<<20, 11), randomBytes(3<<20, 12)
	writeFile(t, src, data)
	writeFile(t, dst, want)
	copy(want[1<<20:], data[4096:4096+100_001])
	return batchJob{copier.Options{Src: src, Dst: dst, SrcOffset: 4096, DstOffset: 1 << 20, Length: 100_001, LengthSet: true}, want}
}

// deviceJobs copies two images onto loop devices with 512 and 4096 byte
// sectors.
func deviceJobs(t *testing.T, dir string) []batchJob {
	blocktest.NeedTool(t, "losetup")
	var jobs []batchJob
	for i, sector := range []int{512, 4096} {
		size := int64(5<<20 + 4096*(i+1))
		dev, _ := blocktest.Device(t, size+1<<20, "--direct-io=on", "--sector-size", strconv.Itoa(sector))
		src := filepath.Join(dir, fmt.Sprint("image", sector))
		data := randomBytes(size, uint64(sector))
		writeFile(t, src, data)
		jobs = append(jobs, batchJob{copier.Options{Src: src, Dst: dev, Direct: copier.DirectAlways}, data})
	}
	return jobs
}

// TestBatchBudgetIsOneCopys: four jobs that would each take 8 buffers of
// 8 MiB share 8 buffers of 8 MiB, not 32; jobs with smaller blocks use
// buffers of the largest size.
func TestBatchBudgetIsOneCopys(t *testing.T) {
	dir := t.TempDir()
	jobs := fileJobs(t, dir, 64<<20, 64<<20, 64<<20, 1<<20)
	opts := make([]copier.Options, len(jobs))
	for i := range jobs {
		opts[i] = jobs[i].opts
	}
	one, err := copier.Prepare(opts[0])
	if err != nil {
		t.Fatal(err)
	}
	b, err := copier.PrepareAll(opts, copier.BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.BlockSize != one.BlockSize || b.Slots != one.QueueDepth || b.Parallel != len(jobs) {
		t.Errorf("batch of %d: %d buffers of %d, %d at once; one copy has %d of %d", len(jobs), b.Slots, b.BlockSize, b.Parallel, one.QueueDepth, one.BlockSize)
	}
	if b.Plans[3].BlockSize >= b.BlockSize {
		t.Errorf("the 1 MiB job's block %d: want it smaller than the batch's %d", b.Plans[3].BlockSize, b.BlockSize)
	}
	rep, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Slots != b.Slots || rep.BlockSize != b.BlockSize {
		t.Errorf("report: %d buffers of %d", rep.Slots, rep.BlockSize)
	}
	for _, j := range jobs {
		compareFile(t, j.opts.Dst, j.want)
	}
}

// TestBatchFairShare: a 2 MiB job beside a 96 MiB one, both started at
// once on 4 shared slots of 64 KiB, ends while the big one still runs:
// its share of the slots is not taken by the big one. Both engines.
func TestBatchFairShare(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			jobs := fileJobs(t, t.TempDir(), 96<<20, 2<<20)
			b := prepareBatch(t, jobs, copier.BatchOptions{}, func(o *copier.Options) {
				o.Engine, o.BlockSize, o.QueueDepth, o.Sparse = eng, 64<<10, 4, copier.SparseNever
			})
			smallFirst := false
			stop := watch(b, func(s []copier.JobStatus) {
				smallFirst = smallFirst || (s[1].State == copier.JobDone && s[0].State == copier.JobRunning)
			})
			_, err := b.Run(context.Background())
			if stop(); err != nil {
				t.Fatal(err)
			}
			if !smallFirst {
				t.Error("the 2 MiB job did not end while the 96 MiB one ran: starved")
			}
			for _, j := range jobs {
				compareFile(t, j.opts.Dst, j.want)
			}
		})
	}
}

// TestBatchParallel: with Parallel 1 the jobs run one at a time (Status
// never shows two running) and all complete.
func TestBatchParallel(t *testing.T) {
	jobs := fileJobs(t, t.TempDir(), 8<<20, 8<<20, 8<<20)
	b := prepareBatch(t, jobs, copier.BatchOptions{Parallel: 1}, func(o *copier.Options) {
		o.BlockSize, o.QueueDepth = 64<<10, 2
	})
	most := runCountingRunning(t, b)
	if most != 1 {
		t.Errorf("at most %d jobs seen running at once, want 1", most)
	}
	for _, j := range jobs {
		compareFile(t, j.opts.Dst, j.want)
	}
}

// TestBatchParallelAtMostSlots: four jobs on two buffers run two at a
// time: a running job holds a buffer, and more jobs than buffers would
// take turns unevenly.
func TestBatchParallelAtMostSlots(t *testing.T) {
	jobs := fileJobs(t, t.TempDir(), 4<<20, 4<<20, 4<<20, 4<<20)
	b := prepareBatch(t, jobs, copier.BatchOptions{}, func(o *copier.Options) {
		o.BlockSize, o.QueueDepth = 64<<10, 2
	})
	if b.Slots != 2 || b.Parallel != 2 {
		t.Fatalf("%d buffers, %d jobs at once: want 2 and 2", b.Slots, b.Parallel)
	}
	most := runCountingRunning(t, b)
	if most > 2 {
		t.Errorf("%d jobs seen running at once on 2 buffers", most)
	}
	for _, j := range jobs {
		compareFile(t, j.opts.Dst, j.want)
	}
}

// prepareBatch prepares jobs with common options applied to each.
func prepareBatch(t *testing.T, jobs []batchJob, bo copier.BatchOptions, common func(*copier.Options)) *copier.Batch {
	t.Helper()
	opts := make([]copier.Options, len(jobs))
	for i, j := range jobs {
		opts[i] = j.opts
		if common != nil {
			common(&opts[i])
		}
	}
	b, err := copier.PrepareAll(opts, bo)
	if err != nil {
		t.Fatalf("PrepareAll: %v", err)
	}
	return b
}

// runCountingRunning runs b and returns the most jobs Status showed
// running at once.
func runCountingRunning(t *testing.T, b *copier.Batch) int {
	t.Helper()
	most := 0
	stop := watch(b, func(s []copier.JobStatus) {
		n := 0
		for _, j := range s {
			if j.State == copier.JobRunning {
				n++
			}
		}
		most = max(most, n)
	})
	_, err := b.Run(context.Background())
	if stop(); err != nil {
		t.Fatal(err)
	}
	return most
}

// watch hands b.Status to f every 200 µs until stop returns; f runs on
// one goroutine, and stop waits for its last call.
func watch(b *copier.Batch, f func([]copier.JobStatus)) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			f(b.Status())
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	return func() { close(done); <-ended }
}

// TestBatchCancel: a batch cancelled while its first job runs (Parallel
// 1): that job stops and its new DST is discarded; the others never start
// and their DSTs never appear.
func TestBatchCancel(t *testing.T) {
	jobs := fileJobs(t, t.TempDir(), 64<<20, 1<<20, 1<<20)
	b := prepareBatch(t, jobs, copier.BatchOptions{Parallel: 1}, func(o *copier.Options) {
		o.BlockSize, o.QueueDepth, o.Sparse = 4096, 1, copier.SparseNever
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for b.Status()[0].Done == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	rep, err := b.Run(ctx)
	var be *copier.BatchError
	if !errors.As(err, &be) || be.Refused || len(be.Jobs) != 3 {
		t.Fatalf("err %v: want a BatchError of the 3 jobs, not refused", err)
	}
	var canceled *engine.CanceledError
	if first := rep.Jobs[0]; !errors.As(first.Err, &canceled) || !first.Started || first.DstState != copier.DstDiscarded {
		t.Errorf("job 1: %v, started %v, DST %v: want cancelled and discarded", first.Err, first.Started, first.DstState)
	}
	for i, j := range rep.Jobs[1:] {
		if !errors.Is(j.Err, copier.ErrNotStarted) || !errors.Is(j.Err, context.Canceled) || j.Started || j.DstState != copier.DstUntouched {
			t.Errorf("job %d: %v, started %v, DST %v: want not started", i+2, j.Err, j.Started, j.DstState)
		}
	}
	for _, j := range jobs {
		if _, err := os.Lstat(j.opts.Dst); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a cancelled batch: %v", j.opts.Dst, err)
		}
	}
}
