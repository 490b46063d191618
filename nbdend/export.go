package nbdend

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/nbd"
	"golang.org/x/sys/unix"
)

// mapWindow is the most one block status query asks about: the client's
// cap on a request without payload, so one wire request covers it, and
// a TiB of holes takes 1024 round trips.
const mapWindow = 1 << 30

// Export is an NBD export as one end of a copy.
type Export struct {
	cl *nbd.Client
	// ext is the last block status answer, consecutive extents covering
	// [ext[0].Off, end of the last); Data answers from it while it can.
	ext []nbd.Extent
}

var (
	_ engine.Endpoint = (*Export)(nil)
	_ engine.OpNamer  = (*Export)(nil)
)

// NewExport makes cl an end of a copy. The caller keeps cl and closes it after
// the copy (Close does).
func NewExport(cl *nbd.Client) *Export { return &Export{cl: cl} }

// Dial opens the export uri names (nbd.Dial) as an end of a copy.
func Dial(ctx context.Context, uri string, opt nbd.Options) (*Export, error) {
	cl, err := nbd.Dial(ctx, uri, opt)
	if err != nil {
		return nil, err
	}
	return NewExport(cl), nil
}

// Client is the export's client.
func (e *Export) Client() *nbd.Client { return e.cl }

// Info describes the export (nbd.Client.Info).
func (e *Export) Info() nbd.Info { return e.cl.Info() }

// Close closes the client: it waits for requests in flight and
// disconnects.
func (e *Export) Close() error { return e.cl.Close() }

// Name is the export's URI.
func (e *Export) Name() string { return e.cl.URI() }

// Data finds the first run of data in [off, end) with block status: an
// extent is data unless it reads as zeros (NBD_STATE_ZERO). It looks no
// further than the answer it has, or one window more: a run of data ends
// there at the latest, and zeros up to there come back as an empty run
// (the planner asks again from its end). A server without base:allocation
// says all of it is data; one that fails block status with an errno is
// not asked again (ErrCannotMap).
func (e *Export) Data(off, end int64) (int64, int64, error) {
	ext, err := e.extents(off, end)
	if err != nil {
		return 0, 0, err
	}
	start := int64(-1)
	for _, x := range ext {
		xs, xe := max(x.Off, off), min(x.Off+x.Len, end)
		if xe <= xs {
			break
		}
		switch {
		case !x.Zero && start < 0:
			start = xs
		case x.Zero && start >= 0:
			return start, xs, nil
		}
		off = xe
	}
	if start < 0 {
		start = off
	}
	return start, off, nil
}

// extents returns the cached extents from the one holding off, asking the
// server for the next window when off is past them.
func (e *Export) extents(off, end int64) ([]nbd.Extent, error) {
	for i, x := range e.ext {
		if x.Off <= off && off < x.Off+x.Len {
			return e.ext[i:], nil
		}
	}
	ext, err := e.cl.Extents(off, min(end-off, mapWindow))
	var ne *nbd.Error
	switch {
	case errors.As(err, &ne) && ne.Err == nil && ne.Errno != 0:
		// The server answered block status with an error (its storage
		// cannot say, a filter injected it): reading everything is still
		// a correct copy. A connection that died fails the copy instead,
		// through the reads that follow.
		return nil, fmt.Errorf("%w: %w", engine.ErrCannotMap, err)
	case err != nil:
		return nil, err
	}
	if len(ext) == 0 {
		return nil, fmt.Errorf("nbd block status %s at offset %d: empty answer", e.Name(), off)
	}
	e.ext = ext
	return ext, nil
}

// OpName names engine requests as NBD commands, for errors.
func (e *Export) OpName(q engine.Request) string {
	switch q.Op {
	case engine.OpSync:
		return "flush"
	case engine.OpFallocate:
		if q.Mode&unix.FALLOC_FL_ZERO_RANGE != 0 {
			return "write zeroes (no hole)"
		}
		return "write zeroes"
	}
	return q.Op.String()
}

// Settle has nothing to do: block status reflects every completed write.
func (e *Export) Settle() error { return nil }

// Reserve: an export has nothing like fallocate's preallocation.
func (e *Export) Reserve(off, n int64, keepSize bool) error { return syscall.EOPNOTSUPP }

// Truncate: an export's size is the server's.
func (e *Export) Truncate(size int64) error {
	return fmt.Errorf("an NBD export's size is fixed by its server: %w", syscall.EOPNOTSUPP)
}

// PrepareTail has nothing to do: WriteAt writes a partial last block by
// read-modify-write of the whole block.
func (e *Export) PrepareTail() error { return nil }
