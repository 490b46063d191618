package enginetest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// Measured: a budget's controller hears what its copy measured of its own
// requests. Every completion is held back until 40 ms after its request
// was submitted (a modelled device with that latency), so each sample
// says at least that: the least and mean latency, and at least two
// requests' worth (a read and a write) of busy time per chunk's bytes.
// The controller's window is the one the copy then uses.
func Measured(t *testing.T, tg Target) {
	const size, bs, depth, lat = 8 << 20, 256 << 10, 4, 40 * time.Millisecond
	dir := t.TempDir()
	src := RandomBytes(size, 63)
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, srcPath, src)
	job, cleanup := NewJob(t, srcPath, dstPath, true, bs, depth)
	defer cleanup()
	job.Length, job.FinalSize = size, size
	job.Budget = engine.NewBudget(job.Buffers)
	ctrl := &sampled{budget: job.Budget}
	job.Budget.SetController(ctrl)
	tg.serve(t, &job)
	if _, err := engine.Run(context.Background(), job, delayed(tg.New, lat)); err != nil {
		t.Fatal(err)
	}
	CompareFile(t, dstPath, src)
	ctrl.mu.Lock()
	defer ctrl.mu.Unlock()
	if len(ctrl.samples) == 0 {
		t.Fatal("the controller heard nothing")
	}
	for _, s := range ctrl.samples {
		if s.Requests == 0 {
			continue
		}
		least := lat * 9 / 10 // the engine stamps a request a moment after the wrapper did
		if s.Least < least || s.Latency < least || s.Elapsed < engine.SampleEvery {
			t.Errorf("sample %+v: requests held %v each, or sampled sooner than %v", s, lat, engine.SampleEvery)
		}
		if s.Bytes > 0 && float64(s.Busy)/float64(s.Bytes) < float64(2*least)/bs {
			t.Errorf("sample %+v: a %d-byte chunk is read and written, %v each: busy %v per byte at least",
				s, bs, lat, 2*least/bs)
		}
	}
	if got := job.Budget.Depth(); got != 2 {
		t.Errorf("depth %d after the controller set 2", got)
	}
}

// sampled is a Controller that keeps the samples, and sets the depth to
// 2 at the first: the copy must go on with it.
type sampled struct {
	mu      sync.Mutex
	samples []engine.Sample
	budget  *engine.Budget
}

func (c *sampled) Observe(s engine.Sample) {
	c.mu.Lock()
	c.samples = append(c.samples, s)
	c.mu.Unlock()
	c.budget.SetWindow(engine.Window{Depth: 2})
}

// delayed wraps a backend so that no completion is handed out sooner
// than lat after its request was submitted.
func delayed(nb engine.NewBackend, lat time.Duration) engine.NewBackend {
	return func(s engine.Setup) (engine.Backend, error) {
		be, err := nb(s)
		if err != nil {
			return nil, err
		}
		return &slowed{Backend: be, lat: lat, sent: map[int]time.Time{}}, nil
	}
}

type slowed struct {
	engine.Backend
	lat  time.Duration
	sent map[int]time.Time // by slot
}

func (b *slowed) Submit(reqs []engine.Request) (int, error) {
	now := time.Now()
	for _, q := range reqs {
		b.sent[q.Slot] = now
	}
	return b.Backend.Submit(reqs)
}

func (b *slowed) Reap(out []engine.Completion, atLeast int, timeout time.Duration) (int, error) {
	n, err := b.Backend.Reap(out, atLeast, timeout)
	for _, c := range out[:n] {
		time.Sleep(time.Until(b.sent[c.Slot].Add(b.lat)))
	}
	return n, err
}
