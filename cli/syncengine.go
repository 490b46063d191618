package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/syncproto"
)

// A push (ringcp sync SRC ssh://host/DST) reads SRC through the engine:
// copier.ReadEach reads it once from start to end, at the depth, block
// size, O_DIRECT and caps (--max-rate, --ioprio, --yield) a copy reading
// it would have, and syncproto's readers are served from what it read.
// They take every byte of SRC once, in windows whose offsets rise (a few
// at once, one per hashing worker), which is what lets a read pass whose
// chunks complete in any order feed them: the chunks are gathered into
// windows of their own here, and a window is handed out once whole and
// dropped once taken.
//
// The engine's thread waits (in Each) only while eachAhead whole windows
// lie ready and untaken from the lowest one on: the readers need those
// first and never wait on the engine for them, so the wait always ends.
// It never waits for a window still being filled: that would hold back
// the completion of a request the readers wait for.

// eachAhead is how many whole windows may wait for the readers before
// the engine waits (64 MiB): more than syncproto's readers take at once
// (its default window is one of ours, and its 4 workers hold 6 windows
// at most between read and sent), so that a reader never waits for a
// window the held engine would have to read.
const eachAhead = 16

// eachWindow is the gathering unit: the engine's cell, which no chunk of
// a read pass crosses.
const eachWindow = copier.CellSize

// engineSource is SRC of a push: blocksync's file for its name, size,
// identity and QEMU read lock, its bytes from the engine.
type engineSource struct {
	*blocksync.File
	plan *copier.EachPlan

	ctx    context.Context
	cancel context.CancelFunc
	start  sync.Once
	ended  chan struct{} // closed once ReadEach returned
	rep    copier.ReadReport
	runErr error // what ReadEach returned

	mu     sync.Mutex
	cond   *sync.Cond
	wins   map[int64]*gathered
	free   [][]byte // buffers of windows taken, for the next ones
	low    int64    // the lowest window not wholly taken
	err    error    // why no more windows come (the read ended or failed)
	closed bool
}

// gathered is one window: its bytes as they arrive, then as they are
// taken; buf nil once all were taken.
type gathered struct {
	buf           []byte
	filled, taken int64
}

// newEngineSource serves f's bytes from an engine read of its path with
// o (its caps and progress), decided now (a refusal comes before
// anything is read or sent); nothing is read before the first ReadAt.
func newEngineSource(ctx context.Context, f *blocksync.File, o copier.EachOptions) (*engineSource, error) {
	s := &engineSource{File: f, ended: make(chan struct{}), wins: map[int64]*gathered{}}
	s.cond = sync.NewCond(&s.mu)
	// The engine reads the file blocksync opened and checked, not
	// whatever the name holds by the time it opens it.
	o.Src, o.SrcFile, o.Length, o.LengthSet, o.Each = f.Name(), f.Descriptor(), f.Size(), true, s.each
	plan, err := copier.PrepareEach(o)
	if err != nil {
		return nil, err
	}
	s.plan = plan
	s.ctx, s.cancel = context.WithCancel(ctx)
	return s, nil
}

// begin starts the engine's read, once, if no ReadAt did yet: a push
// calls it before ssh connects, so that SRC's first windows (eachAhead
// of them at most) are read while the other host logs in, starts ringcp
// and opens DST, rather than after.
func (s *engineSource) begin() { s.start.Do(func() { go s.run() }) }

// run is the engine's read, once.
func (s *engineSource) run() {
	defer close(s.ended)
	rep, err := s.plan.Run(s.ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep, s.runErr = rep, err
	if err == nil {
		err = io.ErrUnexpectedEOF // every window came: a reader wanting more asked past the end
	}
	s.err = err
	s.cond.Broadcast()
}

// each takes one chunk of the engine's read.
func (s *engineSource) each(rel int64, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(data) > 0 {
		w := rel / eachWindow
		n := min(int64(len(data)), (w+1)*eachWindow-rel)
		g, err := s.window(w)
		if err != nil {
			return err
		}
		copy(g.buf[rel-w*eachWindow:], data[:n])
		g.filled += n
		rel, data = rel+n, data[n:]
	}
	s.cond.Broadcast()
	for s.ready() >= eachAhead && !s.closed {
		s.cond.Wait()
	}
	if s.closed {
		return errSourceClosed
	}
	return nil
}

var errSourceClosed = errors.New("the sync stopped reading SRC")

// window is window w, made when its first chunk comes.
func (s *engineSource) window(w int64) (*gathered, error) {
	g := s.wins[w]
	switch {
	case g == nil:
		n := min(eachWindow, s.Size()-w*eachWindow)
		if n <= 0 || w < s.low {
			return nil, fmt.Errorf("read pass: a chunk at window %d of %s, past its end or already taken", w, s.Name())
		}
		g = &gathered{buf: s.buffer(n)}
		s.wins[w] = g
	case g.buf == nil:
		return nil, fmt.Errorf("read pass: window %d of %s read twice", w, s.Name())
	}
	return g, nil
}

// buffer is n bytes for a window: a taken window's, or new.
func (s *engineSource) buffer(n int64) []byte {
	if k := len(s.free); k > 0 && int64(cap(s.free[k-1])) >= n {
		b := s.free[k-1][:n]
		s.free = s.free[:k-1]
		return b
	}
	return make([]byte, n)
}

// ready counts the whole windows from the lowest untaken one on.
func (s *engineSource) ready() int {
	n := 0
	for w := s.low; ; w++ {
		g := s.wins[w]
		if g == nil || g.buf == nil || g.filled < int64(len(g.buf)) {
			return n
		}
		n++
	}
}

// ReadAt hands out [off, off+len(p)) once its windows are whole: the
// engine's bytes. A byte is handed out once; it is read past SRC's end
// as a file is (io.EOF).
func (s *engineSource) ReadAt(p []byte, off int64) (int, error) {
	s.begin()
	size := s.Size()
	if off >= size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), size-off)
	s.mu.Lock()
	defer s.mu.Unlock()
	for done := int64(0); done < want; {
		at := off + done
		w := at / eachWindow
		g, err := s.whole(w)
		if err != nil {
			return int(done), &blocksync.OpError{Op: "read", Path: s.Name(), Offset: at, Err: err}
		}
		rel := at - w*eachWindow
		n := int64(copy(p[done:want], g.buf[rel:]))
		g.taken += n
		if g.taken == int64(len(g.buf)) {
			if len(s.free) < eachAhead {
				s.free = append(s.free, g.buf[:cap(g.buf)])
			}
			s.takeWhole(g)
		}
		done += n
	}
	if want < int64(len(p)) {
		return int(want), io.EOF
	}
	return len(p), nil
}

// whole waits until window w is whole, or the read ended without it.
func (s *engineSource) whole(w int64) (*gathered, error) {
	for {
		g := s.wins[w]
		switch {
		case w < s.low || (g != nil && g.buf == nil):
			return nil, fmt.Errorf("window %d was read already (the sync reads each byte once)", w)
		case g != nil && g.filled == int64(len(g.buf)):
			return g, nil
		case s.err != nil:
			return nil, s.err
		}
		s.cond.Wait()
	}
}

// Unchanged is syncproto's question once it took all of SRC, before it
// tells the other host that SRC was sent whole: the engine's read ends
// then (it has no window left to hand out), with its check that SRC did
// not change while it was read (a *copier.SrcChangedError) or the error
// it met after its last window.
func (s *engineSource) Unchanged() error {
	s.begin()
	select {
	case <-s.ended:
	case <-s.ctx.Done():
		return context.Cause(s.ctx)
	}
	return s.runErr
}

var _ syncproto.Watched = (*engineSource)(nil)

// Close stops the engine's read, if it runs, waits for it, and closes
// the file.
func (s *engineSource) Close() error {
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	s.cancel()
	s.start.Do(func() { close(s.ended) }) // never started: nothing to wait for
	<-s.ended
	s.plan.Close()
	return s.File.Close()
}

// report is the engine read's report, once Close returned.
func (s *engineSource) report() copier.ReadReport { return s.rep }
