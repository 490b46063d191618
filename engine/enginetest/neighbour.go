package enginetest

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/time/rate"
)

// Good neighbour (issue 27): engine.Neighbour as a budget's controller,
// on a modelled device whose latency is flat up to a knee of bytes in
// flight and grows with them beyond it, so that only the knee's bytes
// are needed for its full speed.
const (
	kneeBlock = 64 << 10
	kneeSlots = 16 // up to 1 MiB in flight
	kneeBytes = 384 << 10
	kneeBW    = 24 << 20 // bytes per second the modelled device moves
	kneeOther = 16 << 10 // the other load's bytes in flight: a foreground's few small reads
)

// Neighbourly: alone, the controller keeps every slot (1 MiB); another
// load on the device (the test says so, as the disk's statistics would)
// makes it come down at once and settle about the knee (the device's
// full speed, no standing queue); the copy is correct to the byte. Under
// a rate cap beside others the throughput does not grow with the window,
// so the window comes down to what the cap needs.
func Neighbourly(t *testing.T, tg Target) {
	t.Run("alone-then-loaded", func(t *testing.T) { neighbourLoaded(t, tg) })
	t.Run("rate-cap", func(t *testing.T) { neighbourCapped(t, tg) })
	t.Run("rate-cap-cells", func(t *testing.T) { neighbourCappedCells(t, tg) })
}

func neighbourLoaded(t *testing.T, tg Target) {
	const size = 48 << 20
	dev := &kneeDevice{}
	job, src, dstPath, cleanup := kneeJob(t, tg, size)
	defer cleanup()
	ctl := newNeighbourCtl(job.Budget, dev, 0)
	var loaded atomic.Bool
	go func() { // the other load comes once half the copy is done
		for job.Progress.Done.Load() < size/2 {
			time.Sleep(10 * time.Millisecond)
		}
		ctl.mark()
		dev.other.Store(kneeOther)
		loaded.Store(true)
	}()
	if _, err := engine.Run(context.Background(), job, dev.wrap(tg.New)); err != nil {
		t.Fatal(err)
	}
	CompareFile(t, dstPath, src)
	if !loaded.Load() {
		t.Fatal("the copy ended before the other load came")
	}
	alone, during := ctl.split()
	t.Logf("windows alone %v, loaded %v; %+v", alone, during, ctl.n.Report())
	if len(alone) == 0 || len(during) < 4 {
		t.Fatalf("windows alone %v, loaded %v: too few samples", alone, during)
	}
	if least := minOf(alone); least != kneeSlots*kneeBlock {
		t.Errorf("alone: windows %v, want every slot (%d bytes)", alone, kneeSlots*kneeBlock)
	}
	// Beside the other load, after it grew from its start: mostly about
	// the knee, never every slot for long.
	if last := median(during[len(during)/2:]); last < kneeBytes/2 || last > 2*kneeBytes {
		t.Errorf("another load: windows %v, median of the last half %d bytes, want about the knee (%d)", during, last, kneeBytes)
	}
}

func neighbourCapped(t *testing.T, tg Target) {
	const size, cap = 8 << 20, 3 << 20
	dev := &kneeDevice{}
	dev.other.Store(kneeOther)
	job, src, dstPath, cleanup := kneeJob(t, tg, size)
	defer cleanup()
	job.Rate = rate.NewLimiter(cap, kneeBlock)
	ctl := newNeighbourCtl(job.Budget, dev, cap)
	if _, err := engine.Run(context.Background(), job, dev.wrap(tg.New)); err != nil {
		t.Fatal(err)
	}
	CompareFile(t, dstPath, src)
	windows, _ := ctl.split()
	if len(windows) == 0 {
		t.Fatal("the controller heard nothing")
	}
	// The least window (one request) moves more than the cap on the
	// model: more only waits for the cap.
	if last := windows[len(windows)-1]; last > 4*kneeBlock {
		t.Errorf("capped at %d/s: windows %v, want at most 4 blocks of the %d at the end", cap, windows, kneeSlots)
	}
}

// kneeJob is a copy of size random bytes on the kneeSlots buffers of a
// budget, with a Progress. Buffered: the page cache answers in
// microseconds, so that the model's latency is what the copy sees (on a
// shared machine an O_DIRECT write may take longer than the model).
func kneeJob(t *testing.T, tg Target, size int64) (engine.Job, []byte, string, func()) {
	t.Helper()
	dir := t.TempDir()
	src := RandomBytes(size, 27)
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, srcPath, src)
	job, cleanup := NewJob(t, srcPath, dstPath, false, kneeBlock, kneeSlots)
	job.Length, job.FinalSize = size, size
	job.Budget = engine.NewBudget(job.Buffers)
	job.Progress = &engine.Progress{}
	tg.serve(t, &job)
	return job, src, dstPath, cleanup
}

// neighbourCtl is the budget's controller: engine.Neighbour, told of
// others when the modelled device has another load (as copier's disk
// statistics would tell it), and of the rate cap. It keeps the windows
// it set.
type neighbourCtl struct {
	n      *engine.Neighbour
	budget *engine.Budget
	dev    *kneeDevice
	cap    float64

	mu      sync.Mutex
	windows []int
	marked  int // windows set before mark
}

func newNeighbourCtl(b *engine.Budget, dev *kneeDevice, cap float64) *neighbourCtl {
	c := &neighbourCtl{n: engine.NewNeighbour(len(b.Buffers()), kneeBlock, 4096), budget: b, dev: dev, cap: cap, marked: -1}
	b.SetWindow(c.n.Hear(c.signals()))
	b.SetSampleEvery(engine.NeighbourEvery)
	b.SetController(c)
	return c
}

func (c *neighbourCtl) Observe(s engine.Sample) {
	w := c.n.Step(s, c.signals())
	c.budget.SetWindow(w)
	c.mu.Lock()
	c.windows = append(c.windows, c.n.Bytes())
	c.mu.Unlock()
}

// signals: others are there while the modelled device has another load.
func (c *neighbourCtl) signals() engine.Signals {
	return engine.Signals{Others: c.dev.other.Load() > 0, Cap: c.cap}
}

// mark: the windows set from now on are the second part of split.
func (c *neighbourCtl) mark() {
	c.mu.Lock()
	c.marked = len(c.windows)
	c.mu.Unlock()
}

func (c *neighbourCtl) split() (before, after []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.marked < 0 {
		return c.windows, nil
	}
	return c.windows[:c.marked], c.windows[c.marked:]
}

// kneeDevice models a device of kneeBW bytes per second that needs
// kneeBytes in flight for it: each request's completion is held back
// until max(kneeBytes, bytes in flight)/kneeBW after its submission,
// bytes in flight counting the request, those before it and another
// load's (other).
type kneeDevice struct {
	other atomic.Int64
}

func (d *kneeDevice) wrap(nb engine.NewBackend) engine.NewBackend {
	return func(s engine.Setup) (engine.Backend, error) {
		be, err := nb(s)
		if err != nil {
			return nil, err
		}
		return &kneeBackend{Backend: be, dev: d, due: map[int]time.Time{}, size: map[int]int64{}}, nil
	}
}

type kneeBackend struct {
	engine.Backend
	dev      *kneeDevice
	inFlight int64
	due      map[int]time.Time // by slot
	size     map[int]int64
	done     []engine.Completion // completed by the backend, not yet due
	got      []engine.Completion
}

func (b *kneeBackend) Submit(reqs []engine.Request) (int, error) {
	now := time.Now()
	n, err := b.Backend.Submit(reqs)
	for _, q := range reqs[:max(n, 0)] {
		if q.Slot < 0 {
			continue // a barrier
		}
		size := max(int64(len(q.Buf)), q.Len)
		b.inFlight += size
		queued := float64(max(kneeBytes, b.inFlight+b.dev.other.Load()))
		b.due[q.Slot] = now.Add(time.Duration(queued / kneeBW * float64(time.Second)))
		b.size[q.Slot] = size
	}
	return n, err
}

// Reap hands out the completions that are due, waiting for the first
// one (at most timeout, when positive): each at its own time, so that
// the engine measures each request's modelled latency, not the last of a
// batch's.
func (b *kneeBackend) Reap(out []engine.Completion, atLeast int, timeout time.Duration) (int, error) {
	if cap(b.got) < len(out) {
		b.got = make([]engine.Completion, len(out))
	}
	wait, start := 1, time.Now()
	if len(b.done) > 0 || atLeast == 0 {
		wait = 0 // take what is there, without waiting
	}
	n, err := b.Backend.Reap(b.got[:len(out)], wait, timeout)
	b.done = append(b.done, b.got[:n]...)
	if err != nil || len(b.done) == 0 {
		return 0, err
	}
	first := b.dueOf(b.done[0])
	for _, c := range b.done {
		if d := b.dueOf(c); d.Before(first) {
			first = d
		}
	}
	if timeout > 0 && first.After(start.Add(timeout)) {
		time.Sleep(time.Until(start.Add(timeout)))
		return 0, nil
	}
	time.Sleep(time.Until(first))
	now, k, kept := time.Now(), 0, b.done[:0]
	for _, c := range b.done {
		if k < len(out) && !b.dueOf(c).After(now) {
			out[k] = c
			k++
			b.inFlight -= b.size[c.Slot]
			delete(b.due, c.Slot)
			delete(b.size, c.Slot)
		} else {
			kept = append(kept, c)
		}
	}
	b.done = kept
	return k, nil
}

func (b *kneeBackend) dueOf(c engine.Completion) time.Time {
	if c.Slot < 0 {
		return time.Time{} // a barrier: at once
	}
	return b.due[c.Slot]
}

func minOf(s []int) int {
	m := s[0]
	for _, v := range s {
		m = min(m, v)
	}
	return m
}

func median(s []int) int {
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// neighbourCappedCells: a copy under a rate cap whose chunks are whole
// 4 MiB cells (verification's, Job.Grid) moved in requests of 1/40 s of
// the cap, beside others, is held back by its cap and by nothing else:
// the controller must not say others held it back, nor grow its window
// for a floor. A cell finishes once every half second at 8 MiB/s, so
// most judgements saw no bytes finish at all, which counted as moving
// nothing: "held back by others' I/O, down to 0% of its speed alone".
func neighbourCappedCells(t *testing.T, tg Target) {
	const size, block, slots, cap = 16 << 20, 4 << 20, 4, 8 << 20
	const request = cap / 40 / 4096 * 4096
	dir := t.TempDir()
	src := RandomBytes(size, 41)
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, srcPath, src)
	job, cleanup := NewJob(t, srcPath, dstPath, false, block, slots)
	defer cleanup()
	job.Length, job.FinalSize, job.Grid = size, size, block
	job.Budget = engine.NewBudget(job.Buffers)
	job.Rate = rate.NewLimiter(cap, request)
	tg.serve(t, &job)
	n := engine.NewNeighbour(slots, block, 4096)
	sig := engine.Signals{Others: true, Cap: cap}
	fit := func(w engine.Window) engine.Window {
		if w.Request == 0 || w.Request > request {
			w.Request = request
		}
		return w
	}
	job.Budget.SetWindow(fit(n.Hear(sig)))
	job.Budget.SetSampleEvery(engine.NeighbourEvery)
	job.Budget.SetController(controlFunc(func(s engine.Sample) { job.Budget.SetWindow(fit(n.Step(s, sig))) }))
	if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
		t.Fatal(err)
	}
	CompareFile(t, dstPath, src)
	r := n.Report()
	t.Logf("%+v", r)
	if r.Samples < 20 {
		t.Fatalf("%d samples: too few to judge", r.Samples)
	}
	if r.HeldSeconds >= 0.5 || r.FloorSeconds >= 0.5 {
		t.Errorf("capped at %d B/s in cells of %d bytes: held back by others %.2f s (down to %.0f%%), floor %.2f s: want neither", cap, block, r.HeldSeconds, 100*r.LowestShare, r.FloorSeconds)
	}
}

// controlFunc is a Controller.
type controlFunc func(engine.Sample)

func (f controlFunc) Observe(s engine.Sample) { f(s) }
