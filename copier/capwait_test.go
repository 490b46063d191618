package copier_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// Every wait on the rate cap ends at once on a stop and follows a change
// of the cap (engine/pace.go): in a copy, in the read-back after it, and
// in a batch. stopWithin is far more than "at once" needs on a shared,
// slow machine; before the fix these waits lasted as long as the cap
// said (hours at 1 B/s).
const stopWithin = 5 * time.Second

// runStopped runs run, cancels its context when stop is closed, and
// returns how long after the cancel it returned, and its error.
func runStopped(stop <-chan struct{}, run func(ctx context.Context) error) (time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan time.Time, 1)
	go func() {
		<-stop
		stopped <- time.Now()
		cancel()
	}()
	err := run(ctx)
	select {
	case at := <-stopped:
		return time.Since(at), err
	default:
		return 0, err
	}
}

// after closes the returned channel once cond holds (polled), and d more
// has passed.
func after(cond func() bool, d time.Duration) chan struct{} {
	ch := make(chan struct{})
	go func() {
		for !cond() {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(d)
		close(ch)
	}()
	return ch
}

// TestCapStops: a copy under a cap of 1 byte per second (its next block
// due in hours) stops within stopWithin of its context's end; both
// engines.
func TestCapStops(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), Engine: eng, MaxRate: 1, Progress: &engine.Progress{}}
			writeFile(t, o.Src, randomBytes(1<<20, 31))
			p, err := copier.Prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			took, err := runStopped(after(func() bool { return o.Progress.Read.Load() > 0 }, 300*time.Millisecond),
				func(ctx context.Context) error { _, err := p.Run(ctx); return err })
			var ce *engine.CanceledError
			if !errors.As(err, &ce) || took > stopWithin {
				t.Errorf("stopped under a cap of 1 B/s: %v, %v after the stop", err, took)
			}
		})
	}
}

// TestCapStopsReadBack: --verify's read-back runs under the cap too; a
// cap lowered to 1 B/s during it, then a stop, ends it within
// stopWithin; both engines.
func TestCapStopsReadBack(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), Engine: eng, Verify: true,
				MaxRate: 64 << 20, Progress: &engine.Progress{}}
			writeFile(t, o.Src, randomBytes(32<<20, 32))
			p, err := copier.Prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			verifying := func() bool { return o.Progress.Phase() == engine.PhaseVerify }
			go func() {
				<-after(verifying, 0)
				p.SetMaxRate(1)
			}()
			took, err := runStopped(after(verifying, 300*time.Millisecond),
				func(ctx context.Context) error { _, err := p.Run(ctx); return err })
			var ce *engine.CanceledError
			if !errors.As(err, &ce) || took > stopWithin {
				t.Errorf("stopped in the read-back under a cap of 1 B/s: %v, %v after the stop", err, took)
			}
			if o.Progress.Verified.Load() >= 32<<20 {
				t.Errorf("the read-back verified everything at 1 B/s")
			}
		})
	}
}

// TestCapLowered: a copy at 8 MiB/s has its cap lowered to 256 KiB/s
// (Plan.SetMaxRate): from then on no 1 s window moves more than the new
// cap, 5%, and the requests that may be in flight, which are cut to 1/40
// s of it (a block of the old cap, 200 KiB, moved at once would be most
// of a second's worth); stopped then, it ends at once. Both engines.
func TestCapLowered(t *testing.T) {
	uringtest.NeedOn(t)
	const size, fast, slow = 64 << 20, 8 << 20, 256 << 10
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), Engine: eng, MaxRate: fast, Progress: &engine.Progress{}}
			writeFile(t, o.Src, randomBytes(size, 33))
			p, err := copier.Prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			lowered := make(chan *sampler, 1)
			stop := make(chan struct{})
			go func() {
				time.Sleep(time.Second)
				p.SetMaxRate(slow)
				time.Sleep(300 * time.Millisecond) // what was in flight at the old cap completes
				lowered <- sample(o.Progress.Done.Load)
				time.Sleep(3 * time.Second)
				close(stop)
			}()
			took, err := runStopped(stop, func(ctx context.Context) error { _, err := p.Run(ctx); return err })
			pts := (<-lowered).stop()
			var ce *engine.CanceledError
			if !errors.As(err, &ce) || took > stopWithin {
				t.Errorf("stopped under the lowered cap: %v, %v after the stop", err, took)
			}
			request := int64(slow / 40)
			checkWindows(t, pts, slow, int64(p.QueueDepth+2)*request)
		})
	}
}

// TestBatchCapWaits: a batch under a shared cap of 1 B/s stops within
// stopWithin; another one wakes when the cap is lifted (Batch.SetMaxRate):
// each job moves again at once and never stands still for stopWithin
// until its last byte, where a wait on the old cap would last 512 s (a
// unit at 1 B/s). Both engines.
//
// Not how soon the lifted batch ends: its blocks were fitted to 1 B/s
// (one unit, 512 B) and stay that small, so the 2 MiB left are 4096
// requests, whose time is the disk's. It ended 14.5 s after the lift in a
// CI run beside other packages' I/O; beside a dd writing 3 GB in a loop
// here, 1.6-15 s (the good neighbour, seeing the dd, held the window at
// 1-3 of the 512 B requests), of which the sync after the last byte took
// under 1.3 s, while each job moved again 1-90 ms after the lift and
// stood still at most 1.7 s (fio's 512 B O_DIRECT writes beside the same
// dd: 1.34 s at most).
func TestBatchCapWaits(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		t.Run(string(eng)+"/stop", func(t *testing.T) {
			jobs := fileJobs(t, t.TempDir(), 1<<20, 1<<20)
			read := withProgress(jobs)
			b := prepareBatch(t, jobs, copier.BatchOptions{MaxRate: 1}, func(o *copier.Options) { o.Engine = eng })
			took, err := runStopped(after(func() bool { return read() > 0 }, 300*time.Millisecond),
				func(ctx context.Context) error { _, err := b.Run(ctx); return err })
			var ce *engine.CanceledError
			if !errors.As(err, &ce) || took > stopWithin {
				t.Errorf("a batch stopped under a shared cap of 1 B/s: %v, %v after the stop", err, took)
			}
		})
		t.Run(string(eng)+"/lifted", func(t *testing.T) {
			jobs := fileJobs(t, t.TempDir(), 1<<20, 1<<20)
			read := withProgress(jobs)
			b := prepareBatch(t, jobs, copier.BatchOptions{MaxRate: 1}, func(o *copier.Options) { o.Engine = eng })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ended := make(chan struct{})
			watched := make(chan stillness, 1)
			go func() {
				select {
				case <-after(func() bool { return read() > 0 }, 300*time.Millisecond):
				case <-ended: // Run failed before any byte was read
					watched <- stillness{}
					return
				}
				lift := time.Now()
				b.SetMaxRate(0)
				watched <- watchStill(jobs, lift, ended, cancel) // a wait on the old cap would be 512 s
			}()
			_, err := b.Run(ctx)
			close(ended)
			w := <-watched
			if w.longest > stopWithin {
				t.Fatalf("the batch's cap was lifted, yet job %d stood still for %v after it (Run: %v)", w.job+1, w.longest, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("after the lift: each job still at most %v, the last byte at %v", w.longest, w.last)
			for _, j := range jobs {
				compareFile(t, j.opts.Dst, j.want)
			}
		})
	}
}

// stillness is what watchStill saw: the longest a job (job, from 0) went
// without moving a byte, and when the last byte was done, after the start.
type stillness struct {
	longest, last time.Duration
	job           int
}

// watchStill polls the jobs' progress (bytes read or done) from start until
// every job is done or ended is closed, and calls stalled once a job has
// stood still for more than stopWithin, so that a wait the cap should
// have ended fails the test within seconds, not when it ends. The time
// from start to a job's first byte counts as standing still; a job's
// sync after its last byte is not watched.
func watchStill(jobs []batchJob, start time.Time, ended <-chan struct{}, stalled func()) stillness {
	var w stillness
	moved := make([]time.Time, len(jobs))
	seen := make([]int64, len(jobs))
	for i, j := range jobs {
		moved[i], seen[i] = start, j.opts.Progress.Read.Load()+j.opts.Progress.Done.Load()
	}
	for {
		now, left := time.Now(), false
		for i, j := range jobs {
			p := j.opts.Progress
			done := p.Done.Load()
			if v := p.Read.Load() + done; v != seen[i] {
				seen[i], moved[i] = v, now
				w.last = max(w.last, now.Sub(start))
			}
			if done == int64(len(j.want)) {
				continue // its last byte is done
			}
			if still := now.Sub(moved[i]); still > w.longest {
				w.longest, w.job = still, i
			}
			left = true
		}
		if w.longest > stopWithin && stalled != nil {
			stalled()
			stalled = nil
		}
		select {
		case <-ended:
			return w
		default:
		}
		if !left {
			return w
		}
		time.Sleep(time.Millisecond)
	}
}
