package copier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
)

// Run runs the batch. First every job acquires, on its own goroutine,
// what its copy needs (descriptors, locks, a new DST's unnamed inode or
// temporary file, its engine on the batch's shared buffers), changing no
// DST; if any job cannot, every job lets go again, no DST was written,
// and the error is a *BatchError (Refused) naming the jobs that could
// not. Then the jobs run, Parallel at a time in the order given, each on
// its goroutine and backend. A job that fails stops alone and leaves its
// DST as a single failed copy would (Report.DstState); the others go on.
// Cancelling ctx stops every running job (each drains, syncs and reports
// what its DST holds) and starts no more.
//
// The error is nil when every job is complete; otherwise a *BatchError
// listing the jobs that are not. A Batch runs once.
func (b *Batch) Run(ctx context.Context) (BatchReport, error) {
	rep := BatchReport{Jobs: make([]JobReport, len(b.Plans)), BlockSize: b.BlockSize, Slots: b.Slots}
	for i, p := range b.Plans {
		rep.Jobs[i].Report = p.newReport()
		rep.Jobs[i].Err = ErrNotStarted
	}
	start, cpu0 := time.Now(), cpuTime()
	bufs, err := align.AllocBuffers(b.Slots, b.BlockSize)
	if err != nil {
		return rep, refuseErr(KindResources, "", fmt.Sprintf("nothing was written, the batch could not start: cannot map %d buffers of %d bytes", b.Slots, b.BlockSize), errors.Unwrap(err))
	}
	g := newGate(len(b.Plans))
	s := &shared{budget: engine.NewBudget(bufs.Slots), rate: b.rate, gov: b.gov, noReserve: b.noReserve}
	if b.gov != nil {
		b.gov.attach(s.budget) // the shared depth follows the shared cap
	}
	for i := range b.Plans {
		go b.runJob(ctx, i, s, g, &rep.Jobs[i])
	}
	g.acquired.Wait()
	refused := g.refusals()
	if len(refused) == 0 {
		b.dispatch(ctx, g)
	} else {
		g.startNone()
	}
	g.finished.Wait()
	if !undrained(rep.Jobs) {
		bufs.Free() // else the kernel may still use them: leaked (see acquired)
	}
	rep.Seconds, rep.CPUSeconds = time.Since(start).Seconds(), cpuTime()-cpu0
	rep.MaxRate = b.MaxRate()
	if b.gov != nil {
		rep.Neighbour = b.gov.neighbourReport()
	}
	if rep.Neighbour != nil && rep.Neighbour.Samples == 0 {
		rep.Neighbour = nil // too short to look: it kept every slot
	}
	return rep, outcome(rep.Jobs, refused)
}

// gate is how the jobs of a batch are told to start: once every job has
// acquired (or failed to), each is told whether it runs, in order.
type gate struct {
	acquired sync.WaitGroup // every job has acquired, or failed to
	finished sync.WaitGroup // every job's goroutine has returned
	errs     []error        // acquire's error, per job
	turn     []chan bool    // true: run now; false: never
	ended    chan int       // a job that ran is done
}

func newGate(n int) *gate {
	g := &gate{errs: make([]error, n), turn: make([]chan bool, n), ended: make(chan int, n)}
	for i := range g.turn {
		g.turn[i] = make(chan bool, 1)
	}
	g.acquired.Add(n)
	g.finished.Add(n)
	return g
}

// refusals are the jobs that could not acquire, in order.
func (g *gate) refusals() []*JobError {
	var out []*JobError
	for i, err := range g.errs {
		if err != nil {
			out = append(out, &JobError{Index: i, Err: err})
		}
	}
	return out
}

// startNone tells every job not to run.
func (g *gate) startNone() {
	for _, t := range g.turn {
		t <- false
	}
}

// dispatch starts the jobs in order, at most Parallel at once, and none
// once ctx is done.
func (b *Batch) dispatch(ctx context.Context, g *gate) {
	running := 0
	for _, t := range g.turn {
		ok := b.waitTurn(ctx, g, &running)
		t <- ok
		if ok {
			running++
		}
	}
}

// waitTurn waits until fewer than Parallel jobs run; false once ctx is done.
func (b *Batch) waitTurn(ctx context.Context, g *gate, running *int) bool {
	for *running >= b.Parallel {
		select {
		case <-g.ended:
			*running--
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// runJob is job i's goroutine: acquire, wait for its turn, run, release,
// all on this goroutine, whose OS thread the engine locks from Open to
// Close.
func (b *Batch) runJob(ctx context.Context, i int, s *shared, g *gate, out *JobReport) {
	defer g.finished.Done()
	defer b.state[i].Store(int32(JobDone))
	p := b.Plans[i]
	a, err := p.acquire(ctx, &out.Report, s)
	g.errs[i] = err
	g.acquired.Done()
	if err != nil {
		out.Err = err
		return
	}
	if !<-g.turn[i] {
		if err := a.abandon(p); err != nil {
			out.note("%v", err)
		}
		if ctx.Err() != nil {
			out.Err = fmt.Errorf("%w: %w", ErrNotStarted, ctx.Err())
		}
		return
	}
	defer func() {
		// Done before the next job is let in: Status never shows more
		// than Parallel jobs running.
		b.state[i].Store(int32(JobDone))
		g.ended <- i
	}()
	defer a.release()
	b.state[i].Store(int32(JobRunning))
	out.Started = true
	out.Report, out.Err = p.runAcquired(ctx, a, out.Report)
	if b.gov != nil {
		b.gov.jobCut(p.gov, 0) // a job that ended cuts nothing any more
	}
}

// abandon lets go of what a job acquired without writing: a new DST's
// temporary file is removed, an unnamed one vanishes, and a resume state
// this run made goes with the partial file it would have kept. The error
// says what could not be removed.
func (a *acquired) abandon(p *Plan) error {
	err := a.trust.forget(p, a.dst)
	if a.dst != nil {
		a.dst.discard()
	}
	a.release()
	return err
}

func undrained(jobs []JobReport) bool {
	for _, j := range jobs {
		if j.DstState == DstChanging {
			return true
		}
	}
	return false
}

// outcome is Run's error: the refused jobs, or the ones not complete.
func outcome(jobs []JobReport, refused []*JobError) error {
	if len(refused) > 0 {
		return &BatchError{Jobs: refused, Refused: true}
	}
	var failed []*JobError
	for i, j := range jobs {
		if j.Err != nil {
			failed = append(failed, &JobError{Index: i, Err: j.Err})
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &BatchError{Jobs: failed}
}
