package cli

import "github.com/ringcp/ringcp/blocksync"

// Lend hands out window [off, off+n) in place, once it is whole: the
// bytes the engine's read gathered, without a copy into the reader's
// buffer (syncproto.Lender). Only a whole window at its start is lent
// (ok false otherwise: ReadAt then copies): syncproto's windows are
// ours, 4 MiB each. The window counts as taken, as ReadAt's would; its
// buffer goes back to the free list at release.
func (s *engineSource) Lend(off, n int64) (p []byte, release func(), ok bool, err error) {
	if off%eachWindow != 0 || off >= s.Size() || n != min(eachWindow, s.Size()-off) {
		return nil, nil, false, nil
	}
	s.begin()
	s.mu.Lock()
	defer s.mu.Unlock()
	w := off / eachWindow
	g, err := s.whole(w)
	if err != nil {
		return nil, nil, false, &blocksync.OpError{Op: "read", Path: s.Name(), Offset: off, Err: err}
	}
	p = g.buf
	g.taken = int64(len(p))
	s.takeWhole(g)
	return p, func() { s.recycle(p) }, true, nil
}

// takeWhole marks g, whose bytes were all handed out, as taken, and
// moves the lowest window on past the taken ones; s.mu is held.
func (s *engineSource) takeWhole(g *gathered) {
	g.buf = nil
	for s.wins[s.low] != nil && s.wins[s.low].buf == nil {
		delete(s.wins, s.low)
		s.low++
	}
	s.cond.Broadcast()
}

// recycle keeps a lent window's buffer for a later window.
func (s *engineSource) recycle(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.free) < eachAhead {
		s.free = append(s.free, p[:cap(p)])
	}
}
