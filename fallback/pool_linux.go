package fallback

import (
	"fmt"
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
	wg      sync.WaitGroup
	closed  bool
}

var _ engine.Backend = (*Pool)(nil)

// New starts a pool with one worker per slot. It fits engine.NewBackend.
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
	}
	p.fds = s.Files.Fds()
	p.wg.Add(p.workers)
	for range p.workers {
		go p.work()
	}
	return p, nil
}

func (p *Pool) Name() string { return "pool" }

func (p *Pool) Caps() engine.Caps {
	return engine.Caps{Detail: fmt.Sprintf("%d pread/pwrite workers", p.workers)}
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

func (p *Pool) work() {
	defer p.wg.Done()
	for q := range p.reqs {
		p.done <- Do(p.fds[q.File], q)
	}
}
