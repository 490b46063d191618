package engine

import (
	"context"
	"errors"
	"runtime"
)

// Copy is a job whose backend is set up: everything a copy needs that can
// fail for lack of resources (the ring, its registered files and buffers,
// the pool's workers) is acquired, and nothing has been written. A caller
// that must change DST before the copy (truncate it, offload) does so
// between Open and Run, so that a failure to acquire leaves DST as it was.
//
// Open locks the calling goroutine to its OS thread until Close: io_uring
// SINGLE_ISSUER rings accept enter only from the thread that created them.
// A backend that is ThreadFree (the pool) leaves it unlocked. Run, Finish
// and Close must be called from the goroutine that called Open.
type Copy struct {
	job    Job
	be     Backend
	locked bool // Open locked the goroutine to its thread; Close unlocks it
	used   bool // Run or Finish was called: a Copy runs once
	closed bool
	// undrained: Run or Finish returned an error matching ErrUndrained;
	// the backend is left open (see Close).
	undrained error
}

// Open validates job and builds its backend with newBackend on this
// goroutine's locked OS thread. An error from the backend is returned as
// it is (so errors.Is(err, ring.ErrUnavailable) still tells the caller to
// fall back); the thread is unlocked again on any error.
func Open(job Job, newBackend NewBackend) (*Copy, error) {
	if err := job.validate(); err != nil {
		return nil, err
	}
	if err := job.validateChanged(); err != nil {
		return nil, err
	}
	if job.Budget == nil {
		job.Budget = NewBudget(job.Buffers)
	}
	bufs := job.Budget.Buffers()
	runtime.LockOSThread()
	be, err := newBackend(Setup{Files: job.Files, Ends: job.ends(), Buffers: bufs, Depth: len(bufs), IOPrio: job.IOPrio, Blocking: job.Blocking})
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	c := &Copy{job: job, be: be, locked: true}
	if _, free := be.(ThreadFree); free {
		runtime.UnlockOSThread()
		c.locked = false
	}
	return c, nil
}

// errUsed: a Copy runs its range once.
var errUsed = errors.New("engine: Copy already ran")

// Run copies the job's range. See the package doc for the contract. Stats
// are valid even when err is not nil.
func (c *Copy) Run(ctx context.Context) (Stats, error) {
	if c.used || c.closed {
		return Stats{}, errUsed
	}
	c.used = true
	flushBeforeMapping(&c.job)
	r := newRun(&c.job, c.be)
	err := r.leave(r.copy(ctx))
	c.noteUndrained(err)
	return r.stats, err
}

func (c *Copy) noteUndrained(err error) {
	if errors.Is(err, ErrUndrained) {
		c.undrained = err
	}
}

// Undrained reports whether requests of the copy may still be in flight:
// Run or Finish returned an error matching ErrUndrained. The caller must
// then keep the job's buffers mapped and its files open for the rest of
// the process, and report DST as partial and possibly still changing.
func (c *Copy) Undrained() bool { return c.undrained != nil }

// Finish ends a copy whose first moved bytes were written by other means
// (the filesystem's copy offload) instead of Run: like the end of Run, it
// gives DST its final size, or cuts it back when moveErr says the move
// stopped, and runs the fdatasync barrier through the backend. moveErr is
// what stopped the move (a *CanceledError is built for a context error);
// Stats count moved as written.
func (c *Copy) Finish(moved int64, moveErr error) (Stats, error) {
	if c.used || c.closed {
		return Stats{}, errUsed
	}
	c.used = true
	r := newRun(&c.job, c.be)
	r.prefix.end, r.stats.Contiguous = moved, moved
	r.stats.BytesRead, r.stats.BytesWritten = moved, moved
	switch {
	case moveErr == nil:
	case errors.Is(moveErr, context.Canceled) || errors.Is(moveErr, context.DeadlineExceeded):
		r.canceled = moveErr
	default:
		r.fail(moveErr)
	}
	err := r.leave(r.finish())
	c.noteUndrained(err)
	return r.stats, err
}

// Close releases the backend and unlocks the OS thread. Close is safe to
// call twice. After an undrained copy (see Undrained) it releases nothing:
// closing the ring would unregister buffers the kernel may still fill, and
// the pool's workers may still be inside their system calls. It returns
// the undrained error again then, so a caller that only checks Close
// learns it too.
func (c *Copy) Close() error {
	if c.closed {
		return c.undrained
	}
	c.closed = true
	if c.locked {
		defer runtime.UnlockOSThread()
	}
	if c.undrained != nil {
		return c.undrained
	}
	return c.be.Close()
}
