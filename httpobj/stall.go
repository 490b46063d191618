package httpobj

import (
	"context"
	"io"
	"time"
)

// watchdog cancels a request's context with ErrStalled when no byte (nor
// the headers) came for the stall timeout. A read that returns bytes
// kicks it; kicking costs a timer reset, once per read of the body.
type watchdog struct {
	timer   *time.Timer
	timeout time.Duration
}

func newWatchdog(cancel context.CancelCauseFunc, timeout time.Duration) *watchdog {
	return &watchdog{timeout: timeout, timer: time.AfterFunc(timeout, func() { cancel(ErrStalled) })}
}

func (w *watchdog) kick() { w.timer.Reset(w.timeout) }

func (w *watchdog) stop() { w.timer.Stop() }

// watchedBody is a response body whose reads kick a watchdog.
type watchedBody struct {
	body io.Reader
	dog  *watchdog
}

func (b watchedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n > 0 {
		b.dog.kick()
	}
	return n, err
}
