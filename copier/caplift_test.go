package copier_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// A copy, or a batch, started under a tiny cap and lifted goes on in
// blocks of a MiB (share.go's capBlock; the uncapped copy's, when less):
// the cap only cuts its requests (the governor, 1/40 s of the cap). It
// fitted its blocks to the first cap: at 1 B/s, 512-byte blocks, and the
// 2 MiB after the lift went as 4096 small O_DIRECT writes.

// liftWrites is the most writes the 2 MiB copies below may take: the
// first small request, then whole blocks. Their queue depth is given, so
// that the good neighbour does not cut the requests for others on the
// test machine's disk (as it would an uncapped copy's).
const liftWrites = 8

// liftBlock is the least block of a copy started under a cap.
const liftBlock = 1 << 20

// TestCapLiftedWholeBlocks: a copy started at 1 B/s, lifted once it read
// its first request, has blocks of a MiB (an uncapped copy of the same
// files has 2 MiB) and writes in a few requests. Both engines.
func TestCapLiftedWholeBlocks(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			want := randomBytes(2<<20, 53)
			o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), Engine: eng, QueueDepth: 2}
			writeFile(t, o.Src, want)
			free, err := copier.Prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			o.MaxRate, o.Progress = 1, &engine.Progress{}
			p, err := copier.Prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			rep := runLifted(t, o.Progress.Read.Load, p.SetMaxRate, p.Run)
			compareFile(t, o.Dst, want)
			if w := o.Progress.Writes.Load(); rep.BlockSize < min(free.BlockSize, liftBlock) || w > liftWrites {
				t.Errorf("started at 1 B/s, lifted: block size %d, %d writes; want %d at least (uncapped: %d), at most %d writes",
					rep.BlockSize, w, liftBlock, free.BlockSize, liftWrites)
			}
		})
	}
}

// TestBatchCapLiftedWholeBlocks: the same for a batch under a shared cap
// of 1 B/s (BatchOptions.MaxRate), lifted with Batch.SetMaxRate.
func TestBatchCapLiftedWholeBlocks(t *testing.T) {
	uringtest.NeedOn(t)
	jobs := fileJobs(t, t.TempDir(), 2<<20)
	read := withProgress(jobs)
	depth := func(o *copier.Options) { o.QueueDepth = 2 }
	free := prepareBatch(t, jobs, copier.BatchOptions{}, depth)
	b := prepareBatch(t, jobs, copier.BatchOptions{MaxRate: 1}, depth)
	runLifted(t, read, b.SetMaxRate, b.Run)
	compareFile(t, jobs[0].opts.Dst, jobs[0].want)
	if w := jobs[0].opts.Progress.Writes.Load(); b.BlockSize < min(free.BlockSize, liftBlock) || w > liftWrites {
		t.Errorf("started at 1 B/s, lifted: block size %d, %d writes; want %d at least (uncapped: %d), at most %d writes",
			b.BlockSize, w, liftBlock, free.BlockSize, liftWrites)
	}
}

// runLifted runs a copy or a batch (run, within a minute) whose cap is
// lifted (setMaxRate(0)) once read says it read its first bytes, and
// returns its report; it fails the test when the run fails.
func runLifted[R any](t *testing.T, read func() int64, setMaxRate func(int64), run func(context.Context) (R, error)) R {
	t.Helper()
	go func() {
		<-after(func() bool { return read() > 0 }, 100*time.Millisecond)
		setMaxRate(0)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
