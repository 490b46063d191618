package fallback

import (
	"sync"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// workers run requests on goroutines, one per slot, and give their
// completions back: the Reap and Close of the pool, whose requests block.
// The queue holds everything the engine may have in flight (its depth in
// data requests, plus two syncs), so that Submit never blocks.
type workers struct {
	n      int
	reqs   chan engine.Request
	done   chan engine.Completion
	wg     sync.WaitGroup
	closed bool
}

// startWorkers starts n workers that serve each request with serve. With
// an I/O priority, each worker serves on a thread of its own that has it;
// startWorkers fails with the errno when the kernel refuses it (EPERM for
// the real-time class without CAP_SYS_ADMIN or CAP_SYS_NICE).
func startWorkers(n int, prio engine.IOPrio, serve func(engine.Request) engine.Completion) (*workers, error) {
	w := &workers{n: n, reqs: make(chan engine.Request, n+2), done: make(chan engine.Completion, n+2)}
	started := make(chan error, n)
	w.wg.Add(n)
	for range n {
		go w.work(prio, serve, started)
	}
	var err error
	for range n {
		if e := <-started; err == nil {
			err = e // all fail alike: the first says it
		}
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// work serves requests until Close. With an I/O priority it serves them
// on a thread of its own that has it (engine.LockThreadIOPrio). started
// hears whether the worker could start.
func (w *workers) work(prio engine.IOPrio, serve func(engine.Request) engine.Completion, started chan<- error) {
	defer w.wg.Done()
	if prio != 0 {
		release, err := engine.LockThreadIOPrio(prio)
		if err != nil {
			started <- err
			return
		}
		defer release()
	}
	started <- nil
	for q := range w.reqs {
		w.done <- serve(q)
	}
}

// Reap blocks for atLeast completions (until timeout, when positive), then
// takes whatever else is ready.
func (w *workers) Reap(out []engine.Completion, atLeast int, timeout time.Duration) (int, error) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	n := 0
	for ; n < atLeast && n < len(out); n++ {
		select {
		case out[n] = <-w.done:
		case <-expired:
			return n, nil
		}
	}
	for ; n < len(out); n++ {
		select {
		case out[n] = <-w.done:
		default:
			return n, nil
		}
	}
	return n, nil
}

// Close stops the workers. The engine has reaped everything, so none is
// busy.
func (w *workers) Close() error {
	if !w.closed {
		w.closed = true
		close(w.reqs)
		w.wg.Wait()
	}
	return nil
}
