package fallback

import (
	"fmt"

	"github.com/ringcp/ringcp/engine"
)

// Pool runs pread and pwrite on worker goroutines, one per slot.
type Pool struct {
	*Workers
	workers int
	ioprio  engine.IOPrio
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
	fds := s.Files.Fds()
	w, err := StartWorkers(s.Depth, s.IOPrio, func(q engine.Request) engine.Completion { return Do(fds[q.File], q) })
	if err != nil {
		return nil, fmt.Errorf("pool: %w", err)
	}
	return &Pool{Workers: w, workers: s.Depth, ioprio: s.IOPrio}, nil
}

func (p *Pool) Name() string { return "pool" }

func (p *Pool) Caps() engine.Caps {
	detail := fmt.Sprintf("%d pread/pwrite workers", p.workers)
	if p.ioprio != 0 {
		detail += ", ioprio " + p.ioprio.String()
	}
	return engine.Caps{Detail: detail}
}
