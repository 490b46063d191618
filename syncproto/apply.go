package syncproto

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ringcp/ringcp/blocksync"
)

// apply reads the source's frames and applies them in order, until the
// end (done sent) or a failure.
func (t *target) apply(ctx context.Context) error {
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
				err = t.change(off, int64(len(data)), data)
			}
		case tZero:
			var off, n int64
			if off, n, err = parseZero(p); err == nil {
				err = t.change(off, n, nil)
			}
		case tAck:
			var through int64
			if through, err = parseCount(p, "ack"); err == nil {
				err = t.ack(through)
			}
		case tEnd:
			e, err := parseEnd(p)
			if err != nil {
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
	case off/g < t.resolved:
		return protoErrorf("change at granule %d after granule %d was settled", off/g, t.resolved)
	case blocksync.Granules(off+n, int(g)) > sent:
		return protoErrorf("change [%d, +%d) reaches granules whose digests were not sent (%d sent)", off, n, sent)
	}
	return nil
}

// change writes SRC's bytes (data) or zeros at [off, off+n), and folds
// the granules before it (unchanged) and its own, read back from DST.
func (t *target) change(off, n int64, data []byte) error {
	if err := t.checkChange(off, n); err != nil {
		return err
	}
	g := int64(t.s.opt.Granule)
	t.fold(off / g)
	var err error
	if data != nil {
		_, err = t.dst.WriteAt(data, off)
		t.stats.Written += n
	} else {
		err = t.dst.Zero(off, n)
		t.stats.Zeroed += n
	}
	if err != nil {
		return err
	}
	k := blocksync.Granules(n, int(g))
	t.stats.Changed += k
	if p := t.s.opt.Progress; p != nil {
		p.Changed.Add(n)
	}
	if err := t.foldBack(off, n); err != nil {
		return err
	}
	t.drop(k)
	return nil
}

// foldBack reads [off, off+n) back from DST (zeros past its end) and
// folds its granules' digests: what DST holds now, not what was sent.
func (t *target) foldBack(off, n int64) error {
	if t.readBack == nil {
		t.readBack = make([]byte, MaxData)
	}
	g := t.s.opt.Granule
	for n > 0 {
		buf := t.readBack[:min(n, int64(len(t.readBack)))]
		got, err := t.dst.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return err
		}
		clear(buf[got:])
		for i := 0; i < len(buf); i += g {
			t.whole.Add(t.dig.Sum(buf[i:min(i+g, len(buf))]))
		}
		off, n = off+int64(len(buf)), n-int64(len(buf))
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

// drop settles k changed granules, whose digests were folded from DST.
func (t *target) drop(k int64) {
	t.mu.Lock()
	t.pending = t.pending[k:]
	t.resolved += k
	t.mu.Unlock()
}

// ack: every change before granule through has come; the granules up to
// it are settled, and the sender may run further ahead.
func (t *target) ack(through int64) error {
	t.mu.Lock()
	sent := t.sent
	t.mu.Unlock()
	if through < t.resolved || through > sent {
		return protoErrorf("ack through granule %d, with %d settled and %d sent", through, t.resolved, sent)
	}
	t.fold(through)
	t.mu.Lock()
	t.acked = through
	t.cond.Broadcast()
	t.mu.Unlock()
	return nil
}

// end: every change has come. DST takes SRC's size, is synced, is
// checked against SRC's whole digest, is named if new, and done says so.
func (t *target) end(e end) error {
	if e.granules != t.s.granules {
		return protoErrorf("end after %d granules, want %d", e.granules, t.s.granules)
	}
	if err := t.ack(t.s.granules); err != nil {
		return err
	}
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
