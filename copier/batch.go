package copier

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/time/rate"
)

// A batch is several copies run by one process (ringcp --jobs): a VM's
// disks, the LVs of a volume group. They share one budget of buffers,
// which is the memory and queue depth of one copy however many jobs
// there are, handed out in fair shares (engine.Budget); one rate cap;
// and a limit on how many run at once. Every job is checked, and every
// job's resources acquired, before any job writes a byte; once they run,
// a job that fails stops alone and the others go on.

// DefaultParallel is BatchOptions.Parallel's default: every job at once.
// The shared budget keeps the memory and the depth of one copy whatever
// the number, and its fair shares let a small job finish in the time its
// size deserves beside big ones. One job per device at a time measured no
// faster on files or loop devices here (see the README).
const DefaultParallel = 0

// BatchOptions are what the jobs of a batch share.
type BatchOptions struct {
	// Parallel is how many jobs run at once, in the order given; the
	// others wait for their turn. 0 (DefaultParallel) runs them all. It
	// is capped at the batch's buffers (Batch.Slots): a job runs holding
	// at least one, and more jobs than buffers would take turns unevenly.
	Parallel int
	// MaxRate caps the bytes of the ranges moved per second by all the
	// jobs together, as Options.MaxRate caps one copy: the requests and
	// the shared depth are fitted to it, and Batch.SetMaxRate changes it
	// while the jobs run. 0 is no cap. A job's own Options.MaxRate caps
	// that job as well.
	MaxRate int64
	// Rate, when not nil, is a limiter of the caller's instead of MaxRate
	// (set one or the other): it caps all the jobs together, and may be
	// changed while they run (SetLimit, SetBurst); a job waiting on it
	// sees the change within 200 ms (engine's pacePoll). Its burst must
	// hold the batch's block size.
	Rate *rate.Limiter
}

// Batch is a set of checked copies, ready to Run together. Its Plans say
// what was decided for each job; they are run by Batch.Run only.
type Batch struct {
	Plans []*Plan
	// BlockSize is the size of each shared buffer: the largest of the
	// plans' block sizes. Slots is how many there are, the batch's queue
	// depth (sizeBudget): the buffers of one copy, not one per job.
	BlockSize int
	Slots     int
	// Parallel is how many jobs run at once: BatchOptions.Parallel, or
	// every job, at most Slots.
	Parallel int
	rate     *rate.Limiter  // the jobs' shared cap: gov's, or BatchOptions.Rate
	gov      *governor      // MaxRate's; nil when the caller gave Rate
	state    []atomic.Int32 // each job's JobState
	// noReserve are the jobs whose DSTs must not be preallocated, to
	// leave the room to the others (fitWithoutReserving).
	noReserve map[*Plan]bool
}

// JobState says where a job of a running batch is.
type JobState int32

// Job states, for progress displays.
const (
	JobWaiting JobState = iota // acquiring, or waiting for its turn
	JobRunning                 // copying
	JobDone                    // ended, or will not start
)

// JobStatus is one job's state and progress, read while the batch runs.
type JobStatus struct {
	State  JobState
	Done   int64 // bytes of the range finished on DST
	Length int64 // bytes to copy
}

// ErrNotStarted is the error of a job that never started: the batch was
// refused for another job, or stopped (its context) before this job's
// turn. Its DST is as it was.
var ErrNotStarted = errors.New("not started")

// JobError is one job's error in a BatchError. Index counts from 0 in
// the order the jobs were given.
type JobError struct {
	Index int
	Err   error
}

func (e *JobError) Error() string { return fmt.Sprintf("job %d: %v", e.Index+1, e.Err) }

func (e *JobError) Unwrap() error { return e.Err }

// BatchError lists the jobs of a batch that did not complete, each with
// its error. Refused: the batch was refused before any job wrote a byte
// (the jobs listed are the refused ones; the others did not start).
// errors.As finds each job's error through it (*RefusedError,
// *engine.OpError, *engine.CanceledError).
type BatchError struct {
	Jobs    []*JobError
	Refused bool
}

func (e *BatchError) Error() string {
	verb := "did not complete"
	if e.Refused {
		verb = "refused; nothing was written"
	}
	parts := make([]string, len(e.Jobs))
	for i, j := range e.Jobs {
		parts[i] = j.Error()
	}
	return fmt.Sprintf("%d job(s) %s: %s", len(e.Jobs), verb, strings.Join(parts, "; "))
}

// Unwrap gives each job's error, for errors.Is and errors.As.
func (e *BatchError) Unwrap() []error {
	out := make([]error, len(e.Jobs))
	for i, j := range e.Jobs {
		out[i] = j
	}
	return out
}

// SetMaxRate changes the cap on all the jobs together (BatchOptions.
// MaxRate), before or while Run runs, from any goroutine; 0 removes it.
// It takes effect at each job's next request, and the shared depth
// follows it and the latency. As with Plan.SetMaxRate, the cap cuts the
// requests, not the shared buffers, which PrepareAll sized by the first
// cap (share.go's rule of the capped buffers): a batch started under a
// tiny cap that is raised or lifted later moves whole blocks of a MiB,
// not of 512 bytes. A
// batch given a limiter of the caller's (BatchOptions.Rate) is changed
// through it instead: SetMaxRate does nothing there.
func (b *Batch) SetMaxRate(bytesPerSecond int64) {
	if b.gov != nil {
		b.gov.setCap(bytesPerSecond)
	}
}

// MaxRate is the cap on all the jobs together now, in bytes per second;
// 0 for none (or a limiter of the caller's).
func (b *Batch) MaxRate() int64 {
	if b.gov == nil {
		return 0
	}
	return b.gov.capNow()
}

// mergeByIndex merges two lists sorted by job, one error per job (the
// first list's wins).
func mergeByIndex(a, b []*JobError) []*JobError {
	out := make([]*JobError, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].Index < b[0].Index):
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0].Index < a[0].Index:
			out, b = append(out, b[0]), b[1:]
		default: // the same job: keep a's
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return out
}

// Status is every job's state and progress, safe to call while Run runs.
func (b *Batch) Status() []JobStatus {
	out := make([]JobStatus, len(b.Plans))
	for i, p := range b.Plans {
		out[i] = JobStatus{State: JobState(b.state[i].Load()), Done: p.opts.Progress.Done.Load(), Length: p.Length}
	}
	return out
}

// shared is what the jobs of a running batch share.
type shared struct {
	budget    *engine.Budget
	rate      *rate.Limiter
	gov       *governor // the batch's; nil when the caller gave a limiter
	noReserve map[*Plan]bool
}

// join makes p's job one of the batch's: its slots are the shared
// budget's, and the batch's cap applies besides the job's own (which also
// carries its yield cut).
func (s *shared) join(p *Plan, job *engine.Job) {
	job.Budget = s.budget
	job.SharedRate = s.rate
	if s.gov != nil {
		p.gov.shareWith(s.gov) // its yield depth cut is the shared budget's
	}
	if s.noReserve[p] {
		job.Preallocate = false
	}
}
