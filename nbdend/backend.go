package nbdend

import (
	"fmt"
	"strings"

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
// by its FileID to an export's client or to a descriptor. Close stops
// the workers; the exports stay open: they are the caller's.
type backend struct {
	*fallback.Workers
	detail string
}

var _ engine.Backend = (*backend)(nil)

// New starts the backend for s, whose ends may be Exports, files and
// devices in any mix. It fits engine.NewBackend. With Setup.IOPrio the
// workers' threads have that I/O priority, for the requests they make of
// local files and devices.
func New(s engine.Setup) (engine.Backend, error) {
	if s.Depth < 1 {
		return nil, fmt.Errorf("nbd backend: depth %d", s.Depth)
	}
	fds, clients := s.Files.Fds(), make([]*nbd.Client, len(s.Ends))
	var notes []string
	for id, e := range s.Ends {
		x, ok := e.(*Export)
		switch {
		case ok:
			clients[id] = x.cl
			notes = append(notes, describe(x))
		case e != nil && s.Files[id] == nil:
			return nil, fmt.Errorf("nbd backend: cannot reach %s: neither an NBD export nor a descriptor", e.Name())
		}
	}
	serve := func(q engine.Request) engine.Completion {
		if cl := clients[q.File]; cl != nil {
			return do(cl, q)
		}
		return fallback.Do(fds[q.File], q)
	}
	w, err := fallback.StartWorkers(s.Depth, s.IOPrio, serve)
	if err != nil {
		return nil, fmt.Errorf("nbd backend: %w", err)
	}
	b := &backend{Workers: w, detail: fmt.Sprintf("%d workers", s.Depth)}
	if len(notes) > 0 {
		b.detail += "; " + strings.Join(notes, "; ")
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
