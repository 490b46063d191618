package fallback

import (
	"fmt"
	"github.com/ringcp/ringcp/internal/eintr"
	"sync"
	"syscall"
	"time"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
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
		n, err := p.do(q)
		c := engine.Completion{Slot: q.Slot, N: n}
		if err != nil {
			c.Errno = errnoOf(err)
		}
		p.done <- c
	}
}

// do performs one request. Like an io_uring CQE it reports a short count
// as is and leaves the retry to the engine.
func (p *Pool) do(q engine.Request) (int, error) {
	fd := p.fds[q.File]
	// EINTR: a signal (Go's preemption among them) arrived before anything
	// moved; the same call again is exact.
	n, err := eintr.Retry(func() (int, error) {
		switch q.Op {
		case engine.OpRead:
			return unix.Pread(fd, q.Buf, q.Off)
		case engine.OpWrite:
			return unix.Pwrite(fd, q.Buf, q.Off)
		case engine.OpSync:
			return 0, unix.Fdatasync(fd)
		case engine.OpFallocate:
			return 0, unix.Fallocate(fd, q.Mode, q.Off, q.Len)
		}
		return 0, syscall.EINVAL
	})
	return max(n, 0), err
}

func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EIO
}
