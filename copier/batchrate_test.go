package copier_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/time/rate"
)

// A batch's rate cap is one cap on all its jobs together (ringcp --jobs
// --max-rate), not one per job, and it can be changed while they run.

// withProgress gives each job a Progress of its own, and returns what
// they have read together.
func withProgress(jobs []batchJob) (read func() int64) {
	ps := make([]*engine.Progress, len(jobs))
	for i := range jobs {
		ps[i] = &engine.Progress{}
		jobs[i].opts.Progress = ps[i]
	}
	return func() int64 {
		var n int64
		for _, p := range ps {
			n += p.Read.Load()
		}
		return n
	}
}

// TestBatchMaxRate: three jobs under BatchOptions.MaxRate move no more
// than the cap together, plus 5% and a request (1/40 s of the cap; the
// blocks stay as for no cap), in any 1 s window, and
// cannot end sooner than the cap allows for their sum (one cap per job
// would end three times sooner). Every DST byte for byte; both engines.
func TestBatchMaxRate(t *testing.T) {
	uringtest.NeedOn(t)
	const size, capBPS = 6 << 20, 6 << 20
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			jobs := fileJobs(t, t.TempDir(), size, size, size)
			read := withProgress(jobs)
			b := prepareBatch(t, jobs, copier.BatchOptions{MaxRate: capBPS}, func(o *copier.Options) { o.Engine = eng })
			step := int64(capBPS / 40) // a request under the cap
			if b.MaxRate() != capBPS {
				t.Fatalf("cap %d, want %d/s", b.MaxRate(), capBPS)
			}
			s := sample(read)
			start := time.Now()
			rep, err := b.Run(context.Background())
			took, pts := time.Since(start), s.stop()
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range jobs {
				compareFile(t, j.opts.Dst, j.want)
			}
			total := 3 * size
			if least := time.Duration(float64(int64(total)-step) / capBPS * float64(time.Second)); took < least*95/100 {
				t.Errorf("%d bytes in %v under %d/s for the batch: faster than the cap allows (%v)", total, took, capBPS, least)
			}
			checkWindows(t, pts, capBPS, step)
			if rep.MaxRate != capBPS {
				t.Errorf("report: batch cap %d, want %d", rep.MaxRate, capBPS)
			}
		})
	}
}

// TestBatchSetMaxRate: two jobs started at 2 MiB/s together, which would
// take 8 s, have the cap lifted after a second through Batch.SetMaxRate:
// before that no more than the cap moved, after it they end far sooner.
func TestBatchSetMaxRate(t *testing.T) {
	uringtest.NeedOn(t)
	const size, capBPS = 8 << 20, 2 << 20
	jobs := fileJobs(t, t.TempDir(), size, size)
	read := withProgress(jobs)
	b := prepareBatch(t, jobs, copier.BatchOptions{MaxRate: capBPS}, nil)
	var before atomic.Int64
	timer := time.AfterFunc(time.Second, func() {
		before.Store(read())
		b.SetMaxRate(0)
	})
	defer timer.Stop()
	start := time.Now()
	rep, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		compareFile(t, j.opts.Dst, j.want)
	}
	if n := before.Load(); n > capBPS*105/100+capBPS/40 { // a request over the cap
		t.Errorf("%d bytes read by both jobs in the first second under %d/s together", n, capBPS)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("the cap was lifted after 1 s, yet the batch took %v", took)
	}
	if rep.MaxRate != 0 || b.MaxRate() != 0 {
		t.Errorf("cap after lifting: report %d, batch %d", rep.MaxRate, b.MaxRate())
	}
}

// TestBatchMaxRateWithLimiter: a cap and a limiter of the caller's are
// refused together.
func TestBatchMaxRateWithLimiter(t *testing.T) {
	jobs := fileJobs(t, t.TempDir(), 4096)
	opts := []copier.Options{jobs[0].opts}
	_, err := copier.PrepareAll(opts, copier.BatchOptions{MaxRate: 1 << 20, Rate: rate.NewLimiter(rate.Inf, 1)})
	var re *copier.RefusedError
	if !errors.As(err, &re) || re.Kind != copier.KindBadInput {
		t.Fatalf("MaxRate and Rate together: %v, want a bad-input refusal", err)
	}
	if _, err := copier.PrepareAll(opts, copier.BatchOptions{MaxRate: -1}); !errors.As(err, &re) {
		t.Fatalf("MaxRate -1: %v, want a refusal", err)
	}
}
