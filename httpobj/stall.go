package httpobj

import (
	"context"
	"io"
	"time"
)

// progressFloor is the least a request must move per stall timeout to be
// making progress (16 KiB in 30 s: half a KiB a second): a server that
// trickles a byte now and then, or gives a byte and resets, stalls. Only
// an attempt that moved as much (or a quarter of a smaller request)
// starts the count of retries again.
const progressFloor = 16 << 10

// watchdog cancels a request's context with ErrStalled when the headers
// did not come, or the body did not move progressFloor bytes, for the
// stall timeout. Each progressFloor bytes read restart it: a timer reset
// per 16 KiB.
type watchdog struct {
	timer   *time.Timer
	timeout time.Duration
	moved   int64 // bytes read since the timer last restarted
}

func newWatchdog(cancel context.CancelCauseFunc, timeout time.Duration) *watchdog {
	return &watchdog{timeout: timeout, timer: time.AfterFunc(timeout, func() { cancel(ErrStalled) })}
}

// kick restarts the timer: the headers came.
func (w *watchdog) kick() {
	w.moved = 0
	w.timer.Reset(w.timeout)
}

// read counts n bytes of the body; enough of them restart the timer.
// A body read from one goroutine at a time.
func (w *watchdog) read(n int) {
	if w.moved += int64(n); w.moved >= progressFloor {
		w.kick()
	}
}

func (w *watchdog) stop() { w.timer.Stop() }

// watchedBody is a response body whose reads feed a watchdog.
type watchedBody struct {
	body io.Reader
	dog  *watchdog
}

func (b watchedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.dog.read(n)
	return n, err
}
