package enginetest

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/time/rate"
)

// RateCap copies under a rate cap and samples the bytes read every 50 ms:
// over any 1 s window no more than the cap plus 5%, the burst (one block)
// and the reads in flight may move (the cap counts a read when it is
// sent, the sampler when it completes: up to depth reads sent before a
// window can complete inside it, and do when completions bunch up on a
// loaded machine), and the whole copy cannot be faster than the cap allows (a lower
// bound on time: a slow machine only makes it longer). That the copy
// reaches the cap is measured by the bench, not here. Then the cap is
// raised while a copy runs, as a caller may.
func RateCap(t *testing.T, tg Target) {
	const size, bs, cap, depth = 24 << 20, 256 << 10, 8 << 20, 4
	dir := t.TempDir()
	src := RandomBytes(size, 77)
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, srcPath, src)
	job, cleanup := NewJob(t, srcPath, dstPath, true, bs, depth)
	defer cleanup()
	job.Length, job.FinalSize = size, size
	job.Rate = rate.NewLimiter(cap, bs)
	job.Progress = &engine.Progress{}
	samples := sample(job.Progress, 50*time.Millisecond)
	start := time.Now()
	tg.serve(t, &job)
	if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	points := samples.stop()
	CompareFile(t, dstPath, src)
	if least := time.Duration(float64(size-bs) / cap * float64(time.Second)); took < least*95/100 {
		t.Errorf("copied %d bytes in %v under a cap of %d/s: faster than the cap allows (%v)", size, took, cap, least)
	}
	for i := range points {
		for j := i; j < len(points) && points[j].at.Sub(points[i].at) <= time.Second; j++ {
			if moved := points[j].n - points[i].n; float64(moved) > cap*1.05+(1+depth)*bs {
				t.Fatalf("%d bytes moved within %v: over the cap of %d/s plus 5%%, the burst and the reads in flight", moved, points[j].at.Sub(points[i].at), cap)
			}
		}
	}
	raiseCap(t, tg, srcPath, src)
}

// raiseCap starts a copy at 1 MiB/s, which would take 16 s, and raises the
// cap after a moment: the copy must then end far sooner.
func raiseCap(t *testing.T, tg Target, srcPath string, src []byte) {
	const size, bs = 16 << 20, 256 << 10
	dstPath := filepath.Join(t.TempDir(), "dst")
	job, cleanup := NewJob(t, srcPath, dstPath, true, bs, 4)
	defer cleanup()
	job.Length, job.FinalSize = size, size
	job.Rate = rate.NewLimiter(1<<20, bs)
	timer := time.AfterFunc(300*time.Millisecond, func() { job.Rate.SetLimit(1 << 30) })
	defer timer.Stop()
	start := time.Now()
	tg.serve(t, &job)
	if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("a cap raised to 1 GiB/s after 0.3 s: the copy still took %v", took)
	}
	CompareFile(t, dstPath, src[:size])
}

type point struct {
	at time.Time
	n  int64
}

type sampler struct {
	stopped atomic.Bool
	done    chan []point
}

// sample records p.Read every period until stop.
func sample(p *engine.Progress, period time.Duration) *sampler {
	s := &sampler{done: make(chan []point, 1)}
	go func() {
		var pts []point
		for !s.stopped.Load() {
			pts = append(pts, point{time.Now(), p.Read.Load()})
			time.Sleep(period)
		}
		s.done <- append(pts, point{time.Now(), p.Read.Load()})
	}()
	return s
}

func (s *sampler) stop() []point {
	s.stopped.Store(true)
	return <-s.done
}
