package syncproto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/ringcp/ringcp/blocksync"
)

// The source holds SRC. It reads SRC at full speed and hashes each
// granule, compares each digest with the target's for the same granule
// as they stream in, and sends the granules that differ: their bytes, or
// a zero frame when SRC's granule is all zeros. After each window it
// acknowledges the digests it used, which lets the target run further
// ahead. At the end it sends the whole digest of SRC, and waits for the
// target's done: DST synced, and its own whole digest equal.

type source struct {
	s   *session
	src blocksync.Source
	// unchanged, when not nil, fails the sync when SRC changed while it
	// was read (unchanged.go); called before the end is sent.
	unchanged func() error
	whole     *blocksync.Whole
	dig       *blocksync.Digester // the comparator's, for zero digests

	batches chan []blocksync.Digest // from the receiver, in order
	cur     []blocksync.Digest      // the batch being used
	done    chan done               // the target's done, once
	acked   atomic.Int64            // granules acknowledged to the target
	ended   atomic.Bool             // the end frame went out
	read    atomic.Int64            // bytes of SRC read, by the workers
	stats   blocksync.Stats
}

// srcWindow is a window of SRC read and hashed.
type srcWindow struct {
	buf     []byte
	ds      []blocksync.Digest
	own     []byte // the pool's buffer the window holds (unused when lent)
	release func() // gives a lent buf back; nil when buf is own
}

// Lender is a Source that can hand out its bytes in place instead of
// copying them into the caller's buffer (a push's SRC read through the
// engine: that copy was half the memmove that took a sixth of the
// pushing side's CPU). Lend returns exactly [off, off+n) of SRC, valid
// until release is called, or ok false when it cannot lend that range
// (ReadAt is used then); a range lent counts as read, as ReadAt's does.
type Lender interface {
	Lend(off, n int64) (p []byte, release func(), ok bool, err error)
}

// runSource syncs the target at the other end of s from src, whose size
// s holds; unchanged, when not nil, is SRC's check before the end.
func runSource(ctx context.Context, s *session, src blocksync.Source, unchanged func() error) (blocksync.Stats, error) {
	w, err := blocksync.NewWhole(s.alg, s.key, s.size, s.opt.Granule)
	if err != nil {
		return blocksync.Stats{}, s.fail(err)
	}
	outer := ctx
	u := &source{s: s, src: src, unchanged: unchanged, whole: w, dig: s.digester(),
		batches: make(chan []blocksync.Digest, maxAhead+1), done: make(chan done, 1),
		stats: blocksync.Stats{Size: s.size, Granules: s.granules}}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	u.src = stopSourceWaits(ctx, src)
	recvDone := make(chan struct{})
	var recvErr error
	go func() {
		defer close(recvDone)
		if recvErr = u.receive(); recvErr != nil {
			cancel(recvErr)
		}
	}()
	err = u.send(ctx)
	var d done
	if err == nil {
		select {
		case d = <-u.done:
		case <-ctx.Done():
		}
	}
	if err == nil {
		err = context.Cause(ctx)
	}
	if err == nil {
		err = u.finish(d)
	}
	if err != nil {
		cancel(err)
		if !isRemote(err) {
			s.fail(err)
		}
		s.stop() // ends the receiver's read
		<-recvDone
		u.stats.SrcRead = u.read.Load()
		// A stop by the caller is the story, whatever the peer says of
		// it; else a write that failed because the peer hung up loses
		// to what the peer said before it did.
		if err := outerStop(outer); err != nil {
			return u.stats, err
		}
		return u.stats, preferPeer(context.Cause(ctx), recvErr)
	}
	<-recvDone
	u.stats.SrcRead = u.read.Load()
	return u.stats, nil
}

// outerStop is why the caller's ctx ended, or nil: a stop makes writes
// fail on the closed connection, which are not the story.
func outerStop(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}

// preferPeer is the first of errs that the peer reported, else the
// first that is not nil.
func preferPeer(errs ...error) error {
	for _, err := range errs {
		if isRemote(err) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func isRemote(err error) bool {
	var r *RemoteError
	return errors.As(err, &r)
}

// send reads, compares and sends every window, then the end.
func (u *source) send(ctx context.Context) error {
	s := u.s
	win := int64(s.opt.Window)
	pool := make(chan []byte, s.opt.Workers+2) // enough for every window between read and sent
	for range cap(pool) {
		pool <- nil
	}
	work := func() func(off, n int64) (srcWindow, error) {
		dig := s.digester()
		return func(off, n int64) (srcWindow, error) {
			var buf []byte
			select {
			case buf = <-pool:
			case <-ctx.Done():
				return srcWindow{}, context.Cause(ctx)
			}
			w, err := u.fill(buf, off, n)
			if err != nil {
				return w, err
			}
			u.read.Add(n)
			for i := int64(0); i < n; i += int64(s.opt.Granule) {
				w.ds = append(w.ds, dig.Sum(w.buf[i:min(i+int64(s.opt.Granule), n)]))
			}
			return w, nil
		}
	}
	err := inOrder(ctx, s.size, win, s.opt.Workers, work, func(off, n int64, w srcWindow) error {
		defer func() {
			if w.release != nil {
				w.release()
			}
			pool <- w.own
		}()
		return u.window(ctx, off, w)
	})
	if err != nil {
		return err
	}
	if u.unchanged != nil {
		// All of SRC was read and sent: the target waits for the end,
		// and an error instead leaves a new DST unnamed.
		if err := u.unchanged(); err != nil {
			return err
		}
	}
	u.ended.Store(true)
	return s.fw.write(tEnd, end{whole: u.whole.Sum(), granules: s.granules}.encode())
}

// fill is SRC's window [off, off+n): lent by SRC when it can, else
// read into own (the pool's buffer, made when nil).
func (u *source) fill(own []byte, off, n int64) (srcWindow, error) {
	if l, ok := u.src.(Lender); ok {
		p, release, ok, err := l.Lend(off, n)
		switch {
		case err != nil:
			return srcWindow{own: own}, err
		case ok:
			return srcWindow{buf: p, own: own, release: release}, nil
		}
	}
	if own == nil {
		own = make([]byte, u.s.opt.Window)
	}
	w := srcWindow{buf: own[:n], own: own}
	return w, readFull(u.src, w.buf, off)
}

// readFull reads all of p at off: SRC ending early means it shrank.
func readFull(src blocksync.Source, p []byte, off int64) error {
	n, err := src.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = &blocksync.OpError{Op: "read", Path: src.Name(), Offset: off + int64(n),
			Err: fmt.Errorf("%w: SRC ended early (did it shrink during the sync?)", io.ErrUnexpectedEOF)}
	}
	return err
}

// window compares one window's digests with the target's and sends the
// granules that differ, in runs, then acknowledges the window.
func (u *source) window(ctx context.Context, off int64, w srcWindow) error {
	g := int64(u.s.opt.Granule)
	var run blocksync.Change
	for i, d := range w.ds {
		t, err := u.next(ctx)
		if err != nil {
			return err
		}
		u.whole.Add(d)
		if d == t {
			continue
		}
		rel := int64(i) * g
		n := min(g, int64(len(w.buf))-rel)
		c := blocksync.Change{Off: off + rel, Len: n, Zero: d == u.dig.Zero(int(n))}
		if run.Len > 0 && run.Off+run.Len == c.Off && run.Zero == c.Zero && (c.Zero || run.Len+n <= MaxData) {
			run.Len += n
			continue
		}
		if err := u.flush(run, off, w.buf); err != nil {
			return err
		}
		run = c
	}
	if err := u.flush(run, off, w.buf); err != nil {
		return err
	}
	if p := u.s.opt.Progress; p != nil {
		p.Compared.Add(int64(len(w.buf)))
	}
	through := min((off+int64(len(w.buf))+g-1)/g, u.s.granules)
	u.acked.Store(through) // before the target can act on it
	return u.s.fw.write(tAck, encodeCount(through))
}

// flush sends a run of differing granules, if any: a zero frame, or data
// frames of SRC's bytes (buf is the window starting at base).
func (u *source) flush(run blocksync.Change, base int64, buf []byte) error {
	if run.Len == 0 {
		return nil
	}
	u.stats.Changed += blocksync.Granules(run.Len, u.s.opt.Granule)
	if p := u.s.opt.Progress; p != nil {
		p.Changed.Add(run.Len)
	}
	if run.Zero {
		u.stats.Zeroed += run.Len
		return u.s.fw.write(tZero, encodeChange(run.Off, run.Len))
	}
	u.stats.Written += run.Len
	rel := run.Off - base
	return u.s.fw.write(tData, encodeCount(run.Off), buf[rel:rel+run.Len])
}
