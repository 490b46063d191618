package nbdend

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/fallback"
	"github.com/ringcp/ringcp/nbd"
)

// Name is the backend's name in engine's registry.
const Name = "nbd"

func init() {
	engine.Register(engine.BackendInfo{Name: Name, Preference: 200, Caps: engine.AnyEnd,
		New: New, Available: func() error { return nil }})
}

// backend runs requests on worker goroutines, one per slot, each routed
// by its FileID to an export's client or to a descriptor. Submit never
// blocks: the queue holds as many requests as the engine can have in
// flight.
type backend struct {
	fds     engine.Fds
	clients []*nbd.Client // by FileID; nil for a descriptor
	reqs    chan engine.Request
	done    chan engine.Completion
	workers int
	wg      sync.WaitGroup
	closed  bool
	detail  string
}

var _ engine.Backend = (*backend)(nil)

// New starts the backend for s, whose ends may be Exports, files and
// devices in any mix. It fits engine.NewBackend.
func New(s engine.Setup) (engine.Backend, error) {
	if s.Depth < 1 {
		return nil, fmt.Errorf("nbd backend: depth %d", s.Depth)
	}
	b := &backend{fds: s.Files.Fds(), clients: make([]*nbd.Client, len(s.Ends)), workers: s.Depth,
		reqs: make(chan engine.Request, s.Depth+3), done: make(chan engine.Completion, s.Depth+3)}
	var notes []string
	for id, e := range s.Ends {
		x, ok := e.(*Export)
		switch {
		case ok:
			b.clients[id] = x.cl
			notes = append(notes, describe(x))
		case e != nil && s.Files[id] == nil:
			return nil, fmt.Errorf("nbd backend: cannot reach %s: neither an NBD export nor a descriptor", e.Name())
		}
	}
	b.detail = fmt.Sprintf("%d workers", b.workers)
	if len(notes) > 0 {
		b.detail += "; " + strings.Join(notes, "; ")
	}
	b.wg.Add(b.workers)
	for range b.workers {
		go b.work()
	}
	return b, nil
}

// describe says how an export is reached, for -v and --json.
func describe(x *Export) string {
	in := x.Info()
	return fmt.Sprintf("%s over %d connection(s), block sizes %d/%d/%d", x.Name(), in.Connections,
		in.BlockSize.Min, in.BlockSize.Preferred, in.BlockSize.Max)
}

func (b *backend) Name() string { return Name }

func (b *backend) Caps() engine.Caps { return engine.Caps{Detail: b.detail} }

func (b *backend) Submit(reqs []engine.Request) (int, error) {
	for _, q := range reqs {
		b.reqs <- q
	}
	return len(reqs), nil
}

// Reap blocks for atLeast completions (until timeout, when positive), then
// takes whatever else is ready.
func (b *backend) Reap(out []engine.Completion, atLeast int, timeout time.Duration) (int, error) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	n := 0
	for ; n < atLeast && n < len(out); n++ {
		select {
		case out[n] = <-b.done:
		case <-expired:
			return n, nil
		}
	}
	for ; n < len(out); n++ {
		select {
		case out[n] = <-b.done:
		default:
			return n, nil
		}
	}
	return n, nil
}

// Close stops the workers. The engine has reaped everything, so none is
// busy. The exports stay open: they are the caller's.
func (b *backend) Close() error {
	if !b.closed {
		b.closed = true
		close(b.reqs)
		b.wg.Wait()
	}
	return nil
}

func (b *backend) work() {
	defer b.wg.Done()
	for q := range b.reqs {
		if cl := b.clients[q.File]; cl != nil {
			b.done <- do(cl, q)
			continue
		}
		b.done <- fallback.Do(b.fds[q.File], q)
	}
}
