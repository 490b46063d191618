package fallback

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ringcp/ringcp/engine"
)

// Pool runs each request on a worker goroutine, one per slot: pread and
// pwrite on the ends that are descriptors, the IOEnd's own methods on the
// others (an NBD export). An end that can only be read in order is served
// by a sequencer of its own instead (sequential.go).
type Pool struct {
	*workers
	seq     [engine.NumFiles]*sequencer
	names   []string // the transports of the IOEnds served, in FileID order
	details []string
	ioprio  engine.IOPrio
	rings   *ringWrites // O_DIRECT writes on ext4 (ringwrite_linux.go)
}

var _ engine.ThreadFree = (*Pool)(nil)

// ThreadFree: the workers make the system calls, so any thread may
// submit and reap (engine.ThreadFree).
func (*Pool) ThreadFree() {}

// New starts a pool with one worker per slot for s, whose ends may be
// descriptors (Setup.Files) and IOEnds (Setup.Ends) in any mix. It fits
// engine.NewBackend. With Setup.IOPrio, each worker gives its thread that
// I/O priority (ioprio_set); New fails with the errno when the kernel
// refuses it (EPERM for the real-time class without CAP_SYS_ADMIN or
// CAP_SYS_NICE).
func New(s engine.Setup) (engine.Backend, error) {
	if s.Depth < 1 {
		return nil, fmt.Errorf("pool: depth %d", s.Depth)
	}
	p := &Pool{ioprio: s.IOPrio}
	fds, ends := s.Files.Fds(), [engine.NumFiles]engine.IOEnd{}
	for id, e := range s.Ends {
		if e == nil || s.Files[id] != nil {
			continue
		}
		x, ok := e.(engine.IOEnd)
		if !ok {
			return nil, fmt.Errorf("pool: cannot reach %s: neither a descriptor nor an end that moves its own bytes", e.Name())
		}
		ends[id] = x
		in := x.IOInfo()
		if !slices.Contains(p.names, in.Transport) {
			p.names = append(p.names, in.Transport)
		}
		p.details = append(p.details, in.Detail)
	}
	p.rings = newRingWrites(s, len(p.details) > 0)
	serve := func(q engine.Request) engine.Completion {
		if e := ends[q.File]; e != nil {
			return doEnd(e, q)
		}
		if c, ok := p.rings.write(fds[q.File], q); ok {
			return c
		}
		return Do(fds[q.File], q)
	}
	w, err := startWorkers(s.Depth, s.IOPrio, serve)
	if err != nil {
		return nil, fmt.Errorf("pool: %w", err)
	}
	p.workers = w
	for id, e := range ends {
		if e != nil && e.IOInfo().Sequential {
			p.seq[id] = startSequencer(e, cap(w.reqs), w.done)
		}
	}
	return p, nil
}

// Name is "pool", or the transports of the ends it serves that move their
// own bytes ("nbd"): what the copy's bytes went through.
func (p *Pool) Name() string {
	if len(p.names) > 0 {
		return strings.Join(p.names, "+")
	}
	return "pool"
}

func (p *Pool) Caps() engine.Caps {
	rings := ""
	if p.rings.used() {
		rings = ", O_DIRECT writes on ext4 through io_uring"
	}
	if len(p.details) > 0 {
		return engine.Caps{Detail: fmt.Sprintf("%d workers%s; %s", p.n, rings, strings.Join(p.details, "; "))}
	}
	detail := fmt.Sprintf("%d pread/pwrite workers%s", p.n, rings)
	if p.ioprio != 0 {
		detail += ", ioprio " + p.ioprio.String()
	}
	return engine.Caps{Detail: detail}
}

// Submit queues the requests: each to its end's sequencer, or to the
// workers, which take them in order.
func (p *Pool) Submit(reqs []engine.Request) (int, error) {
	for _, q := range reqs {
		if s := p.seq[q.File]; s != nil {
			s.reqs <- q
			continue
		}
		p.workers.reqs <- q
	}
	return len(reqs), nil
}

// Close stops the sequencers and the workers. The engine has reaped
// everything, so none is busy.
func (p *Pool) Close() error {
	for i, s := range p.seq {
		if s != nil {
			s.stop()
			p.seq[i] = nil
		}
	}
	err := p.workers.Close()
	p.rings.close()
	return err
}
