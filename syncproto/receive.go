package syncproto

import (
	"context"
	"errors"
	"io"

	"github.com/ringcp/ringcp/blocksync"
)

// receive reads the target's frames: digests, in order and no more than
// SRC has granules, then done. It runs beside send, so that the target
// never waits on the source to read.
func (u *source) receive() error {
	var expect int64 // the next granule a digest frame must start at
	for {
		typ, p, err := u.s.fr.next()
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return protoErrorf("the target closed the connection before it said done (%v)", io.ErrUnexpectedEOF)
		case err != nil:
			return err
		}
		switch typ {
		case tDigests:
			first, ds, err := parseDigests(p, nil)
			switch {
			case err != nil:
				return err
			case first != expect:
				return protoErrorf("digests from granule %d where granule %d was due", first, expect)
			case int64(len(ds)) > u.s.granules-expect:
				return protoErrorf("digests past SRC's %d granules", u.s.granules)
			case expect+int64(len(ds))-u.acked.Load() > maxAhead:
				// Bounds what the source holds: a target may not flood it.
				return protoErrorf("the target ran more than %d granules ahead of the acknowledgements", maxAhead)
			}
			expect += int64(len(ds))
			select {
			case u.batches <- ds:
			default: // one batch per digest at most: cannot fill while the bound above holds
				return protoErrorf("the target sent more digest frames than it may")
			}
		case tDone:
			if !u.ended.Load() {
				return protoErrorf("done before the end frame was sent")
			}
			d, err := parseDone(p)
			if err != nil {
				return err
			}
			u.done <- d
			return nil
		case tError:
			return u.s.remote(p)
		default:
			return protoErrorf("a %v frame from the target", typ)
		}
	}
}

// next is the target's digest of the next granule, waiting for it.
func (u *source) next(ctx context.Context) (blocksync.Digest, error) {
	for len(u.cur) == 0 {
		select {
		case u.cur = <-u.batches:
		case <-ctx.Done():
			return blocksync.Digest{}, context.Cause(ctx)
		}
	}
	d := u.cur[0]
	u.cur = u.cur[1:]
	return d, nil
}

// finish checks the target's done: the same whole digest, the same
// changes applied as sent.
func (u *source) finish(d done) error {
	if w := u.whole.Sum(); d.whole != w {
		return &MismatchError{Src: w, Dst: d.whole}
	}
	if d.written != u.stats.Written || d.zeroed != u.stats.Zeroed || d.changed != u.stats.Changed {
		return protoErrorf("the target applied %d bytes written, %d zeroed, %d granules; %d, %d, %d were sent",
			d.written, d.zeroed, d.changed, u.stats.Written, u.stats.Zeroed, u.stats.Changed)
	}
	u.stats.DstRead, u.stats.OldSize = d.dstRead, d.oldSize
	return nil
}
