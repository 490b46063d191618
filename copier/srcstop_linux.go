package copier

import (
	"context"
	"errors"
	"os"
	"sync/atomic"

	"github.com/ringcp/ringcp/engine"
)

// When Run's context ends, the engine stops submitting and waits for the
// requests in flight. A SRC that moves its own bytes may never complete
// one: a server that stalls mid-body or asks to wait (Retry-After), a
// pipe whose writer neither writes nor closes. Its reads are interrupted
// (held.interrupt) so that the copy stops at once, and the failures that
// causes are the stop they are, not a failure of SRC.

// srcStopper interrupts a SRC's reads once a context ends.
type srcStopper struct {
	stop func() bool
	done atomic.Bool // the SRC was interrupted
}

// stopSrcWith interrupts src's reads when ctx ends, until end.
func stopSrcWith(ctx context.Context, src *held) *srcStopper {
	s := &srcStopper{stop: func() bool { return false }}
	if src == nil || src.interrupt == nil {
		return s
	}
	s.stop = context.AfterFunc(ctx, func() {
		s.done.Store(true)
		src.interrupt()
	})
	return s
}

func (s *srcStopper) end() { s.stop() }

// explain makes err, the copy's error when it is the SRC's reads that
// were interrupted, the stop it is: a *CanceledError with what the engine
// wrote (st). Any other error (a digest that differs) stays as it is.
func (s *srcStopper) explain(ctx context.Context, st engine.Stats, err error) error {
	var canceled *CanceledError
	if err == nil || !s.done.Load() || errors.As(err, &canceled) {
		return err
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, context.Cause(ctx)) {
		return err
	}
	return &CanceledError{Written: st.BytesWritten, Contiguous: st.Contiguous, Synced: st.Synced, Read: st.BytesRead, Err: context.Cause(ctx)}
}
