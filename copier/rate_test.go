package copier_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestMaxRate: under Options.MaxRate the plan's requests are at most
// 1/40 s of the cap (its blocks stay as for no cap, for a cap lifted
// later); the copy never moves more than the cap, plus 5% and a request,
// in any 1 s window, and cannot end sooner than the cap allows (a lower
// bound: a slow machine only makes it longer). Both engines.
func TestMaxRate(t *testing.T) {
	uringtest.NeedOn(t)
	const size, capBPS = 20 << 20, 8 << 20
	for _, eng := range engines {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			data := randomBytes(size, 3)
			o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), Engine: eng, MaxRate: capBPS, Progress: &engine.Progress{}}
			writeFile(t, o.Src, data)
			p, err := copier.Prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			step := int64(capBPS / 40) // a request under the cap
			if !strings.Contains(strings.Join(p.Notes, "\n"), "requests of at most 204 KiB while the cap holds: two are 50 ms of the 8.00 MiB/s cap") {
				t.Errorf("notes do not say how the cap cuts the requests: %q", p.Notes)
			}
			s := sampleRead(o.Progress)
			start := time.Now()
			rep, err := p.Run(context.Background())
			took, pts := time.Since(start), s.stop()
			if err != nil {
				t.Fatal(err)
			}
			compareFile(t, o.Dst, data)
			if least := time.Duration(float64(size-step) / capBPS * float64(time.Second)); took < least*95/100 {
				t.Errorf("%d bytes in %v under %d/s: faster than the cap allows (%v)", size, took, capBPS, least)
			}
			checkWindows(t, pts, capBPS, step)
			if rep.MaxRate != capBPS || rep.Rate() <= 0 || rep.Rate() > capBPS*1.05+float64(step)/took.Seconds() {
				t.Errorf("report: cap %d, rate %.0f", rep.MaxRate, rep.Rate())
			}
		})
	}
}

// TestSetMaxRate: a copy started at 1 MiB/s, which would take 16 s, has
// its cap lifted after a moment through Plan.SetMaxRate; before that no
// more than the cap moved, after it the copy ends far sooner.
func TestSetMaxRate(t *testing.T) {
	uringtest.NeedOn(t)
	const size = 16 << 20
	dir := t.TempDir()
	data := randomBytes(size, 4)
	o := copier.Options{Src: filepath.Join(dir, "src"), Dst: filepath.Join(dir, "dst"), MaxRate: 1 << 20, Progress: &engine.Progress{}}
	writeFile(t, o.Src, data)
	p, err := copier.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	var before atomic.Int64
	timer := time.AfterFunc(time.Second, func() {
		before.Store(o.Progress.Read.Load())
		p.SetMaxRate(0)
	})
	defer timer.Stop()
	start := time.Now()
	rep, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	compareFile(t, o.Dst, data)
	if n := before.Load(); n > 1<<20*105/100+(1<<20)/40 { // a request over the cap
		t.Errorf("%d bytes read in the first second under 1 MiB/s", n)
	}
	if took := time.Since(start); took > 12*time.Second {
		t.Errorf("the cap was lifted after 1 s, yet the copy took %v", took)
	}
	if rep.MaxRate != 0 || p.MaxRate() != 0 {
		t.Errorf("cap after lifting: report %d, plan %d", rep.MaxRate, p.MaxRate())
	}
}

type point struct {
	at time.Time
	n  int64
}

type sampler struct {
	stopped atomic.Bool
	done    chan []point
}

// sampleRead records p.Read every 20 ms until stop.
func sampleRead(p *engine.Progress) *sampler { return sample(p.Read.Load) }

// sample records read() every 20 ms until stop.
func sample(read func() int64) *sampler {
	s := &sampler{done: make(chan []point, 1)}
	go func() {
		var pts []point
		for !s.stopped.Load() {
			pts = append(pts, point{time.Now(), read()})
			time.Sleep(20 * time.Millisecond)
		}
		s.done <- append(pts, point{time.Now(), read()})
	}()
	return s
}

func (s *sampler) stop() []point {
	s.stopped.Store(true)
	return <-s.done
}

// checkWindows fails when more than capBPS*1.05 plus one block moved
// within any 1 s window of the samples.
func checkWindows(t *testing.T, pts []point, capBPS, block int64) {
	t.Helper()
	for i := range pts {
		for j := i; j < len(pts) && pts[j].at.Sub(pts[i].at) <= time.Second; j++ {
			if moved := pts[j].n - pts[i].n; float64(moved) > float64(capBPS)*1.05+float64(block) {
				t.Fatalf("%d bytes moved within %v: over the cap of %d/s plus 5%% and a block", moved, pts[j].at.Sub(pts[i].at), capBPS)
			}
		}
	}
}
