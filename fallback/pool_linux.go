package fallback

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// Pool runs requests on worker goroutines. Submit never blocks: the queue
// holds as many requests as the engine can have in flight.
type Pool struct {
	fds     engine.Fds
	reqs    chan engine.Request
	done    chan engine.Completion
	workers int
	ioprio  engine.IOPrio
	wg      sync.WaitGroup
	closed  bool
}

var _ engine.Backend = (*Pool)(nil)

// New starts a pool with one worker per slot. It fits engine.NewBackend.
// With Setup.IOPrio, each worker gives its thread that I/O priority
// (ioprio_set); New fails with the errno when the kernel refuses it (EPERM
// for the real-time class without CAP_SYS_ADMIN or CAP_SYS_NICE).
func New(s engine.Setup) (engine.Backend, error) {
	if s.Depth < 1 {
		return nil, fmt.Errorf("pool: depth %d", s.Depth)
	}
	if err := s.DescriptorsOnly(); err != nil {
		return nil, fmt.Errorf("pool: %w", err)
	}
	p := &Pool{
		reqs:    make(chan engine.Request, s.Depth+1),
		done:    make(chan engine.Completion, s.Depth+1),
		workers: s.Depth,
		ioprio:  s.IOPrio,
	}
	p.fds = s.Files.Fds()
	started := make(chan error, p.workers)
	p.wg.Add(p.workers)
	for range p.workers {
		go p.work(started)
	}
	var err error
	for range p.workers {
		if e := <-started; err == nil {
			err = e // all fail alike: the first says it
		}
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("pool: %w", err)
	}
	return p, nil
}

func (p *Pool) Name() string { return "pool" }

func (p *Pool) Caps() engine.Caps {
	detail := fmt.Sprintf("%d pread/pwrite workers", p.workers)
	if p.ioprio != 0 {
		detail += ", ioprio " + p.ioprio.String()
	}
	return engine.Caps{Detail: detail}
}

func (p *Pool) Submit(reqs []engine.Request) (int, error) {
	for _, q := range reqs {
		p.reqs <- q
	}
	return len(reqs), nil
}

// Reap blocks for atLeast completions (until timeout, when positive), then
// takes whatever else is ready.
func (p *Pool) Reap(out []engine.Completion, atLeast int, timeout time.Duration) (int, error) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	n := 0
	for ; n < atLeast && n < len(out); n++ {
		select {
		case out[n] = <-p.done:
		case <-expired:
			return n, nil
		}
	}
	for ; n < len(out); n++ {
		select {
		case out[n] = <-p.done:
		default:
			return n, nil
		}
	}
	return n, nil
}

// Close stops the workers. The engine has reaped everything, so none is
// busy.
func (p *Pool) Close() error {
	if !p.closed {
		p.closed = true
		close(p.reqs)
		p.wg.Wait()
	}
	return nil
}

// work serves requests until Close. With an I/O priority it serves them
// on a thread of its own that has it, and gives the thread back with its
// old priority at the end, so that the priority never reaches another
// goroutine. Should that fail, the goroutine exits still locked, which
// ends the thread. started hears whether the worker could start.
func (p *Pool) work(started chan<- error) {
	defer p.wg.Done()
	if p.ioprio != 0 {
		runtime.LockOSThread()
		old, err := engine.ThreadIOPrio(0)
		if err == nil {
			err = engine.SetThreadIOPrio(p.ioprio)
		}
		if err != nil {
			started <- err
			return
		}
		defer func() {
			if engine.SetThreadIOPrio(old) == nil {
				runtime.UnlockOSThread()
			}
		}()
	}
	started <- nil
	for q := range p.reqs {
		p.done <- Do(p.fds[q.File], q)
	}
}
