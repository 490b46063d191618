package syncproto

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ringcp/ringcp/blocksync"
)

// apply reads the source's frames and hands their changes to an
// applier, which writes several at once and folds them in order, until
// the end (done sent) or a failure. It returns once every write it
// started has returned.
func (t *target) apply(ctx context.Context) error {
	a := newApplier(t)
	ctx, cancel := context.WithCancelCause(ctx)
	a.start(ctx, cancel)
	err := t.read(ctx, a)
	cancel(err)
	if ferr := a.wait(); ferr != nil {
		return ferr // what failed first, in the stream's order: the reader then only saw the connection closed
	}
	return err
}

// read is apply's frame loop.
func (t *target) read(ctx context.Context, a *applier) error {
	for {
		typ, p, err := t.s.fr.next()
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return t.s.hungUp(ctx, tEnd)
		case err != nil:
			return err
		}
		switch typ {
		case tData:
			var off int64
			var data []byte
			if off, data, err = parseData(p); err == nil {
				err = t.change(ctx, a, off, int64(len(data)), data)
			}
		case tZero:
			var off, n int64
			if off, n, err = parseZero(p); err == nil {
				err = t.change(ctx, a, off, n, nil)
			}
		case tAck:
			var through int64
			if through, err = parseCount(p, "ack"); err == nil {
				err = t.checkAck(through)
			}
			if err == nil {
				t.front = through
				err = a.queue(ctx, &op{ack: through})
			}
		case tEnd:
			e, err := parseEnd(p)
			if err != nil {
				return err
			}
			if err := a.drain(); err != nil {
				return err
			}
			return t.end(e)
		case tError:
			return t.s.remote(p)
		default:
			err = protoErrorf("a %v frame from the source", typ)
		}
		if err != nil {
			return err
		}
	}
}

// checkChange refuses a change that is not whole granules of SRC, comes
// before or over an earlier one, or covers granules whose digests were
// not sent (the source cannot know they differ).
func (t *target) checkChange(off, n int64) error {
	g, size := int64(t.s.opt.Granule), t.s.size
	t.mu.Lock()
	sent := t.sent
	t.mu.Unlock()
	switch {
	case off%g != 0 || (n%g != 0 && off+n != size):
		return protoErrorf("change [%d, +%d) is not whole granules of %d", off, n, g)
	case off > size || n > size-off:
		return protoErrorf("change [%d, +%d) past SRC's end %d", off, n, size)
	case off/g < t.front:
		return protoErrorf("change at granule %d after granule %d was settled", off/g, t.front)
	case blocksync.Granules(off+n, int(g)) > sent:
		return protoErrorf("change [%d, +%d) reaches granules whose digests were not sent (%d sent)", off, n, sent)
	}
	return nil
}

// change checks a change of SRC's bytes (data) or zeros at [off,
// off+n) and queues it; data is copied, the frame's buffer being the
// reader's.
func (t *target) change(ctx context.Context, a *applier, off, n int64, data []byte) error {
	if err := t.checkChange(off, n); err != nil {
		return err
	}
	t.front = blocksync.Granules(off+n, t.s.opt.Granule)
	t.count(off, n, data == nil)
	c := &op{off: off, n: n, zero: data == nil, done: make(chan struct{})}
	var err error
	if c.buf, err = a.take(ctx); err != nil {
		return err
	}
	copy(c.buf, data)
	return a.queue(ctx, c)
}

// count adds an accepted change to the stats, before a worker may
// write it: from then on DST may hold it, and a refusal or a failure
// that follows must not pass for "nothing was written" (lateRefusal).
// Counted when settled, a change written (or being written) when a
// refusal came was not counted, and the pull exited 2 over a changed
// DST. The reader alone counts, and end reads the counts after drain.
func (t *target) count(off, n int64, zero bool) {
	if zero {
		t.stats.Zeroed += n
	} else {
		t.stats.Written += n
	}
	t.stats.Changed += blocksync.Granules(n, t.s.opt.Granule)
}

// checkAck refuses an ack before a change already settled or past the
// digests sent.
func (t *target) checkAck(through int64) error {
	t.mu.Lock()
	sent := t.sent
	t.mu.Unlock()
	if through < t.front || through > sent {
		return protoErrorf("ack through granule %d, with %d settled and %d sent", through, t.front, sent)
	}
	return nil
}

// fold folds the granules from resolved up to upto as unchanged: DST's
// digests as sent, which the source found equal to SRC's.
func (t *target) fold(upto int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for ; t.resolved < upto; t.resolved++ {
		t.whole.Add(t.pending[0])
		t.pending = t.pending[1:]
	}
	if p := t.s.opt.Progress; p != nil {
		p.Compared.Store(min(t.resolved*int64(t.s.opt.Granule), t.s.size))
	}
}

// settle folds a change that was applied: the granules before it as
// unchanged, then its own as read back from DST.
func (t *target) settle(c *op) {
	g := t.s.opt.Granule
	t.fold(c.off / int64(g))
	for _, d := range c.ds {
		t.whole.Add(d)
	}
	k := blocksync.Granules(c.n, g)
	if p := t.s.opt.Progress; p != nil {
		p.Changed.Add(c.n)
	}
	t.mu.Lock()
	t.pending = t.pending[k:]
	t.resolved += k
	t.mu.Unlock()
}

// ack: every change before granule through has come and was settled;
// the granules up to it are settled too, and the sender may run further
// ahead.
func (t *target) ack(through int64) {
	t.fold(through)
	t.mu.Lock()
	t.acked = through
	t.cond.Broadcast()
	t.mu.Unlock()
}

// end: every change has come and was settled. DST takes SRC's size, is
// synced, is checked against SRC's whole digest, is named if new, and
// done says so.
func (t *target) end(e end) error {
	if e.granules != t.s.granules {
		return protoErrorf("end after %d granules, want %d", e.granules, t.s.granules)
	}
	if err := t.checkAck(t.s.granules); err != nil {
		return err
	}
	t.ack(t.s.granules)
	if t.dst.Resizable() && t.old != t.s.size {
		if err := t.dst.Truncate(t.s.size); err != nil {
			return err
		}
	}
	if err := t.dst.Sync(); err != nil {
		return err
	}
	whole := t.whole.Sum()
	if t.s.opt.Verify && whole == e.whole {
		var err error
		if whole, err = t.reread(); err != nil {
			return err
		}
	}
	if whole != e.whole {
		return &MismatchError{Src: e.whole, Dst: whole}
	}
	if c, ok := t.dst.(interface{ Commit() error }); ok {
		if err := c.Commit(); err != nil {
			return err
		}
	}
	d := done{whole: whole, written: t.stats.Written, zeroed: t.stats.Zeroed, dstRead: t.dstRead.Load(),
		oldSize: t.old, changed: t.stats.Changed}
	if err := t.s.fw.write(tDone, d.encode()); err != nil {
		return fmt.Errorf("syncproto: DST is synced, but the source could not be told: %w", err)
	}
	return nil
}
