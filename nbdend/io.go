package nbdend

import (
	"fmt"
	"syscall"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/fallback"
	"github.com/ringcp/ringcp/nbd"
)

// Name is the name NBD copies were run under in engine's registry, kept
// so that a caller who asks for it (ringcp --engine nbd) still gets the
// backend that reaches exports: the pool, which serves any engine.IOEnd.
const Name = "nbd"

func init() {
	engine.Register(engine.BackendInfo{Name: Name, Preference: 200, Caps: engine.AnyEnd,
		New: fallback.New, Available: func() error { return nil }})
}

var _ engine.IOEnd = (*Export)(nil)

// ReadAt reads from the export; a read that meets its end is short.
func (e *Export) ReadAt(p []byte, off int64) (int, error) { return e.cl.ReadAt(p, off) }

// WriteAt writes to the export; the client writes a partial last block
// by reading it, patching it and writing it back.
func (e *Export) WriteAt(p []byte, off int64) (int, error) { return e.cl.WriteAt(p, off) }

// Flush is NBD_CMD_FLUSH: the only thing that makes an NBD DST synced.
func (e *Export) Flush() error { return e.cl.Flush() }

// Zero is WRITE_ZEROES: with punch, one that may leave a hole, with
// FAST_ZERO where the server offers it (a server that would zero by
// writing says EOPNOTSUPP at once, and the engine moves on to its next
// method); without, one with NO_HOLE. A server without WRITE_ZEROES gets
// EOPNOTSUPP for both, and the engine writes zeros from its own buffers,
// in parallel, rather than the client one buffer at a time. TRIM is never
// used: it leaves the contents undefined, which a copy cannot accept.
func (e *Export) Zero(off, n int64, punch bool) error {
	in := e.cl.Info()
	if !in.CanZero() {
		return syscall.EOPNOTSUPP
	}
	flags := nbd.NoHole
	if punch {
		flags = 0
		if in.CanFastZero() {
			flags = nbd.FastZero
		}
	}
	return e.cl.Zero(off, n, flags)
}

// IOInfo says how the export is reached, for -v and --json.
func (e *Export) IOInfo() engine.IOInfo {
	in := e.Info()
	return engine.IOInfo{Transport: Name, Detail: fmt.Sprintf("%s over %d connection(s), block sizes %d/%d/%d", e.Name(), in.Connections,
		in.BlockSize.Min, in.BlockSize.Preferred, in.BlockSize.Max)}
}
