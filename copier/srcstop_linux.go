package copier

import (
	"context"
	"errors"
	"os"
	"sync"

	"github.com/ringcp/ringcp/engine"
)

// When Run's context ends, the engine stops submitting and waits for the
// requests in flight. A SRC that moves its own bytes may never complete
// one: a server that stalls mid-body or asks to wait (Retry-After), a
// pipe whose writer neither writes nor closes. Its reads are interrupted
// (held.interrupt) so that the copy stops at once, and the failures that
// causes are the stop they are, not a failure of SRC.

//
// The same goes for a copy that failed: once one range of an object
// failed for good (a 404, a changed object, retries spent), the others
// in flight, which may be stalling or waiting out a backoff, cannot make
// the copy succeed. The engine calls abandon at its first failure
// (engine.Job.OnFail), after that failure became the copy's error.

// srcStopper interrupts a SRC's reads once a context ends, or once the
// copy failed.
//
// Whichever comes first decides what the interruption means: a stop
// after the copy failed (a signal while the engine drains) leaves the
// failure the copy's error, and a failure after a stop (the interrupted
// reads) leaves the stop.
type srcStopper struct {
	stop      func() bool
	interrupt func() // the SRC's, or nil
	mu        sync.Mutex
	done      bool // the SRC was interrupted by the context
	abandoned bool // the SRC was interrupted after the copy failed
}

// stopSrcWith interrupts src's reads when ctx ends, until end.
func stopSrcWith(ctx context.Context, src *held) *srcStopper {
	s := &srcStopper{stop: func() bool { return false }}
	if src == nil || src.interrupt == nil {
		return s
	}
	s.interrupt = src.interrupt
	s.stop = context.AfterFunc(ctx, func() {
		if s.first(&s.done) {
			src.interrupt()
		}
	})
	return s
}

func (s *srcStopper) end() { s.stop() }

// first sets which (done or abandoned) unless either is set already.
func (s *srcStopper) first(which *bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.abandoned {
		return false
	}
	*which = true
	return true
}

// stopped tells whether the context's end interrupted the SRC first.
func (s *srcStopper) stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// abandon interrupts the SRC's reads in flight: the copy failed (the
// engine's OnFail). What the interrupted reads then fail with is no
// cause of the copy's failure (abandonedCause).
func (s *srcStopper) abandon(error) {
	if s == nil || s.interrupt == nil || !s.first(&s.abandoned) {
		return
	}
	s.interrupt()
}

// abandonedCause tells whether c, the first error the SRC met, is only
// the interruption of its reads after the copy had failed elsewhere (DST
// full, say): the copy's error then stands without it.
func (s *srcStopper) abandonedCause(c error) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	abandoned := s.abandoned
	s.mu.Unlock()
	if !abandoned {
		// Stopped by the context, the interruption is the cause that
		// makes the copy's error the stop it is (explain).
		return false
	}
	return interruption(c)
}

// explain makes err, the copy's error when it is the SRC's reads that
// were interrupted, the stop it is: a *CanceledError with what the engine
// wrote (st). Any other error (a digest that differs) stays as it is.
func (s *srcStopper) explain(ctx context.Context, st engine.Stats, err error) error {
	var canceled *CanceledError
	if err == nil || !s.stopped() || errors.As(err, &canceled) {
		return err
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, context.Cause(ctx)) {
		return err
	}
	return &CanceledError{Written: st.BytesWritten, Contiguous: st.Contiguous, Synced: st.Synced, Read: st.BytesRead, Err: context.Cause(ctx)}
}
