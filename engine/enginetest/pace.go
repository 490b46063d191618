package enginetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/time/rate"
)

// stopWithin is how long a copy waiting on a rate cap may take to end
// once stopped, or to go on once the cap is lifted: it should be at once,
// and is far more than a shared, slow machine needs.
const stopWithin = 5 * time.Second

// CapWaits: every wait on a rate cap ends at once on a stop and follows
// a change of the cap. Under a cap of one byte per second (the next
// request due in an hour), a copy, a read pass and a compare stop within
// stopWithin of their context's end; a copy wakes when the cap is lifted,
// told (Budget.Wake) or not. Then a cap lowered while a copy runs cuts
// its requests and holds in every 1 s window after the change.
func CapWaits(t *testing.T, tg Target) {
	for _, kind := range []string{"copy", "read-pass", "compare"} {
		t.Run("stop/"+kind, func(t *testing.T) { capStops(t, tg, kind) })
	}
	for _, told := range []bool{true, false} {
		t.Run(fmt.Sprint("lifted/told=", told), func(t *testing.T) { capLifted(t, tg, told) })
	}
	t.Run("lowered", func(t *testing.T) { capLowered(t, tg) })
}

// slowCapJob is a job over 1 MiB of src under a cap of one byte per
// second whose burst holds one alignment unit: that unit goes at once,
// the next one an hour later.
func slowCapJob(t *testing.T, tg Target, kind string) (engine.Job, []byte, string, func()) {
	t.Helper()
	const size = 1 << 20
	dir := t.TempDir()
	src := RandomBytes(size, 61)
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, srcPath, src)
	var job engine.Job
	var cleanup func()
	switch kind {
	case "copy":
		// Over an existing DST of the range's size, which a target may
		// serve as an export too.
		writeFile(t, dstPath, make([]byte, size))
		job, cleanup = NewJob(t, srcPath, dstPath, true, 64<<10, 4)
	case "read-pass":
		job, cleanup = checkJob(t, srcPath, "", size, true, func(int64, []byte, []byte) error { return nil })
	case "compare":
		writeFile(t, dstPath, src)
		job, cleanup = checkJob(t, srcPath, dstPath, size, true, func(int64, []byte, []byte) error { return nil })
	}
	job.Length = size
	job.Rate = rate.NewLimiter(1, max(job.SrcAlign, job.DstAlign))
	job.Progress = &engine.Progress{}
	tg.serve(t, &job)
	return job, src, dstPath, cleanup
}

// afterFirstRead calls fn on another goroutine once the copy's first
// chunk was read (a read pass's, which may never complete under the cap:
// once it had time to), and the engine had a moment to wait on the cap
// for the next.
func afterFirstRead(job engine.Job, fn func()) {
	go func() {
		for job.Check == nil && job.Progress.Read.Load() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		fn()
	}()
}

func capStops(t *testing.T, tg Target, kind string) {
	job, src, dstPath, cleanup := slowCapJob(t, tg, kind)
	defer cleanup()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan time.Time, 1)
	afterFirstRead(job, func() {
		stopped <- time.Now()
		cancel()
	})
	st, err := engine.Run(ctx, job, tg.New)
	took := time.Since(<-stopped)
	var ce *engine.CanceledError
	if !errors.As(err, &ce) {
		t.Fatalf("%s under a cap of 1 B/s, stopped: %v, want a CanceledError", kind, err)
	}
	if took > stopWithin {
		t.Errorf("%s under a cap of 1 B/s ended %v after its stop", kind, took)
	}
	if kind == "copy" {
		samePrefix(t, dstPath, src, st.Contiguous)
	}
}

// capLifted: a copy waiting on a cap of 1 B/s has it lifted; told, or
// finding out by itself, it ends at once.
func capLifted(t *testing.T, tg Target, told bool) {
	job, src, dstPath, cleanup := slowCapJob(t, tg, "copy")
	defer cleanup()
	job.Budget = engine.NewBudget(job.Buffers)
	lifted := make(chan time.Time, 1)
	afterFirstRead(job, func() {
		lifted <- time.Now()
		job.Rate.SetLimit(rate.Inf)
		if told {
			job.Budget.Wake()
		}
	})
	if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(<-lifted); took > stopWithin {
		t.Errorf("the cap was lifted, yet the copy ended %v later", took)
	}
	CompareFile(t, dstPath, src)
}

// capLowered: a copy at 8 MiB/s in 256 KiB requests has its cap lowered
// to 256 KiB/s, with requests of 1/40 s of it, as copier's governor does
// it: every read sent after the change is that small, and no 1 s window
// from then on moves more than the new cap, 5%, and the requests that may
// be in flight. The copy is stopped then, and ends at once.
func capLowered(t *testing.T, tg Target) {
	const size, bs, depth, fast, slow = 24 << 20, 256 << 10, 4, 8 << 20, 256 << 10
	dir := t.TempDir()
	src := RandomBytes(size, 62)
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, srcPath, src)
	writeFile(t, dstPath, make([]byte, size)) // an existing DST, which a target may serve
	job, cleanup := NewJob(t, srcPath, dstPath, true, bs, depth)
	defer cleanup()
	job.Length = size
	job.Rate = rate.NewLimiter(fast, bs)
	job.Progress = &engine.Progress{}
	job.Budget = engine.NewBudget(job.Buffers)
	rec := &readLog{}
	tg.serve(t, &job)
	unit := max(job.SrcAlign, job.DstAlign)
	request := max(unit, slow/40/unit*unit)
	ctx, cancel := context.WithCancel(context.Background())
	type marks struct {
		changed, stopped time.Time
		samples          *sampler
	}
	done := make(chan marks, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		job.Rate.SetBurst(request)
		job.Rate.SetLimit(slow)
		job.Budget.SetWindow(engine.Window{Depth: depth, Request: request})
		job.Budget.Wake()
		// The engine takes the change at its next turn, at once; the
		// reads it had sent before complete within moments.
		time.Sleep(300 * time.Millisecond)
		m := marks{changed: time.Now(), samples: sample(job.Progress, 50*time.Millisecond)}
		time.Sleep(2500 * time.Millisecond)
		m.stopped = time.Now()
		cancel()
		done <- m
	}()
	st, err := engine.Run(ctx, job, rec.wrap(tg.New))
	m := <-done
	changed := m.changed
	if took := time.Since(m.stopped); took > stopWithin {
		t.Errorf("stopped under the lowered cap, the copy ended %v later", took)
	}
	var ce *engine.CanceledError
	if !errors.As(err, &ce) {
		t.Fatalf("err %v, want a CanceledError (the copy cannot end in 3 s at the caps)", err)
	}
	points := m.samples.stop()
	if big := rec.readsAfter(changed, request); big != 0 {
		t.Errorf("after the cap was lowered, a read of %d bytes went; requests of at most %d were asked", big, request)
	}
	for i := range points {
		for j := i; j < len(points) && points[j].at.Sub(points[i].at) <= time.Second; j++ {
			if moved := points[j].n - points[i].n; float64(moved) > slow*1.05+float64((2+depth)*request) {
				t.Fatalf("%d bytes read within %v after the cap was lowered to %d/s", moved, points[j].at.Sub(points[i].at), slow)
			}
		}
	}
	samePrefix(t, dstPath, src, st.Contiguous)
}

// readLog wraps a backend and keeps the size and time of every read it
// is given.
type readLog struct {
	mu    sync.Mutex
	reads []sent
}

type sent struct {
	at time.Time
	n  int
}

func (rc *readLog) wrap(nb engine.NewBackend) engine.NewBackend {
	return func(s engine.Setup) (engine.Backend, error) {
		be, err := nb(s)
		if err != nil {
			return nil, err
		}
		return &recording{Backend: be, rc: rc}, nil
	}
}

// readsAfter is the largest read over most sent at or after from; 0 when
// none was.
func (rc *readLog) readsAfter(from time.Time, most int) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	big := 0
	for _, r := range rc.reads {
		if !r.at.Before(from) && r.n > most {
			big = max(big, r.n)
		}
	}
	return big
}

type recording struct {
	engine.Backend
	rc *readLog
}

func (b *recording) Submit(reqs []engine.Request) (int, error) {
	b.rc.mu.Lock()
	now := time.Now()
	for _, q := range reqs {
		if q.Op == engine.OpRead {
			b.rc.reads = append(b.rc.reads, sent{now, len(q.Buf)})
		}
	}
	b.rc.mu.Unlock()
	return b.Backend.Submit(reqs)
}

// samePrefix: a stopped copy's DST holds SRC's first n bytes.
func samePrefix(t *testing.T, path string, src []byte, n int64) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) < n || !bytes.Equal(got[:n], src[:n]) {
		t.Errorf("DST does not hold SRC's first %d bytes after a stop", n)
	}
}
