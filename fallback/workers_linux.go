package fallback

import (
	"sync"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// Workers runs requests on goroutines, one per slot, and gives their
// completions back: the Submit, Reap and Close of a backend whose
// requests block (the pool's pread/pwrite, the nbd backend's round trips).
// Submit never blocks: the queue holds everything the engine may have in
// flight (its depth in data requests, plus two syncs).
type Workers struct {
	reqs   chan engine.Request
	done   chan engine.Completion
	wg     sync.WaitGroup
	closed bool
}

// StartWorkers starts n workers that serve each request with serve. With
// an I/O priority, each worker serves on a thread of its own that has it;
// StartWorkers fails with the errno when the kernel refuses it (EPERM for
// the real-time class without CAP_SYS_ADMIN or CAP_SYS_NICE).
func StartWorkers(n int, prio engine.IOPrio, serve func(engine.Request) engine.Completion) (*Workers, error) {
	w := &Workers{reqs: make(chan engine.Request, n+2), done: make(chan engine.Completion, n+2)}
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
func (w *Workers) work(prio engine.IOPrio, serve func(engine.Request) engine.Completion, started chan<- error) {
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

// Submit queues the requests; the workers take them in order.
func (w *Workers) Submit(reqs []engine.Request) (int, error) {
	for _, q := range reqs {
		w.reqs <- q
	}
	return len(reqs), nil
}

// Reap blocks for atLeast completions (until timeout, when positive), then
// takes whatever else is ready.
func (w *Workers) Reap(out []engine.Completion, atLeast int, timeout time.Duration) (int, error) {
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
func (w *Workers) Close() error {
	if !w.closed {
		w.closed = true
		close(w.reqs)
		w.wg.Wait()
	}
	return nil
}
