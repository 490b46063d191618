package copier

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/stream"
)

// TestFailureThenStop: DST fails first (ENOSPC), the engine's OnFail
// interrupts SRC's reads in flight, and while the engine waits for them a
// stop signal ends the context. The copy's error is the failure, as it
// was decided first: not a *CanceledError, not "read-ahead closed" in
// its words. Before, the stop that came second made the interruption of
// SRC look like the cause, and the copy was reported stopped, its
// ENOSPC hidden.
func TestFailureThenStop(t *testing.T) {
	// What an interrupted SRC's reads fail with: a web request's
	// context, a read-ahead's close.
	for _, interruption := range []error{context.Canceled, stream.ErrClosed} {
		failureThenStop(t, interruption)
	}
}

func failureThenStop(t *testing.T, interruption error) {
	var mu sync.Mutex
	var srcErr error
	interrupted := make(chan struct{}, 2)
	src := &held{
		interrupt: func() {
			mu.Lock()
			srcErr = interruption
			mu.Unlock()
			interrupted <- struct{}{}
		},
		cause: func() error {
			mu.Lock()
			defer mu.Unlock()
			return srcErr
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := stopSrcWith(ctx, src)
	defer stop.end()
	full := &engine.OpError{Op: "write", Path: "/mnt/small/dst", Offset: 8 << 20, Err: syscall.ENOSPC}
	stop.abandon(full) // the engine's OnFail
	<-interrupted
	cancel() // the signal, while the engine drains
	// The context's AfterFunc runs on a goroutine of its own.
	ran := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ran) })
	<-ran
	time.Sleep(50 * time.Millisecond)

	err := stop.explain(ctx, engine.Stats{}, explainSrc(&acquired{src: src}, full, stop))
	var canceled *CanceledError
	if errors.As(err, &canceled) {
		t.Fatalf("SRC interrupted with %v: a copy that failed with ENOSPC before the stop: %v, want the ENOSPC", interruption, err)
	}
	if !errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), interruption.Error()) {
		t.Fatalf("SRC interrupted with %v: got %q, want the write's ENOSPC alone", interruption, err)
	}
}

// TestStopThenFailure: the stop comes first; the interrupted reads then
// fail the copy and the engine's OnFail comes second: the copy was
// stopped (a *CanceledError), as before.
func TestStopThenFailure(t *testing.T) {
	const url = "https://example.com/disk.img"
	var mu sync.Mutex
	var srcErr error
	interrupted := make(chan struct{}, 2)
	src := &held{
		// The SRC the interrupted read names: explainSrc adds a cause
		// only to a failure of SRC's own requests.
		io: namedEnd{name: url},
		interrupt: func() {
			mu.Lock()
			srcErr = context.Canceled
			mu.Unlock()
			interrupted <- struct{}{}
		},
		cause: func() error {
			mu.Lock()
			defer mu.Unlock()
			return srcErr
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := stopSrcWith(ctx, src)
	defer stop.end()
	cancel()
	<-interrupted
	readFailed := &engine.OpError{Op: "read", Path: url, Offset: 0, Err: syscall.ECANCELED}
	stop.abandon(readFailed)
	err := stop.explain(ctx, engine.Stats{}, explainSrc(&acquired{src: src}, readFailed, stop))
	var canceled *CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("a stopped copy: %v, want a *CanceledError", err)
	}
}

// namedEnd is an end that only has a name: explainSrc asks no more of it.
type namedEnd struct {
	engine.IOEnd
	name string
}

func (e namedEnd) Name() string { return e.name }
