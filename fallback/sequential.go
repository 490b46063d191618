package fallback

import (
	"errors"
	"io"
	"syscall"

	"github.com/ringcp/ringcp/engine"
)

// sequencer serves an end that can only be read in order
// (engine.IOInfo.Sequential: a stream) on one goroutine of its own. The
// engine issues reads in offset order, but not always: a read retried
// after EAGAIN, or one held back by the rate cap, comes after reads
// further on were sent. So a read that starts past the end's position
// reads the gap first and keeps it, and a read that starts before it is
// served from what was kept: a gap, or what a failed read had taken from
// the stream. A read is filled from the stream until it is full, the
// stream ends or fails; only a full one hands its bytes out for good (the
// rest of a short one may start a little before its end, aligned down
// for O_DIRECT). So what is kept belongs to reads the engine will send
// (again): at most its window of buffers, but for a read it abandons
// (a stop), kept until Close.
//
// The stream's bytes before the first read are skipped, not kept: the
// engine reads its range in order from its start. A sequential end must
// say that all of it is data (Endpoint.Data), so that the engine reads
// every byte and leaves no gap it never asks for.
type sequencer struct {
	end    engine.IOEnd
	reqs   chan engine.Request
	done   chan<- engine.Completion
	exited chan struct{}

	started bool
	pos     int64  // the next byte the end reads
	kept    []kept // runs taken from the stream and not handed out for good, in offset order
}

// kept is a run of a stream's bytes that a read may still ask for.
type kept struct {
	off int64
	b   []byte
}

func (k kept) end() int64 { return k.off + int64(len(k.b)) }

// gapChunk is the most read over a gap in one call.
const gapChunk = 1 << 20

func startSequencer(e engine.IOEnd, queue int, done chan<- engine.Completion) *sequencer {
	s := &sequencer{end: e, reqs: make(chan engine.Request, queue), done: done, exited: make(chan struct{})}
	go s.run()
	return s
}

func (s *sequencer) run() {
	defer close(s.exited)
	for q := range s.reqs {
		s.done <- s.serve(q)
	}
}

// stop ends the goroutine once it has served what was submitted.
func (s *sequencer) stop() {
	close(s.reqs)
	<-s.exited
}

func (s *sequencer) serve(q engine.Request) engine.Completion {
	if q.Op != engine.OpRead {
		// A stream is read, never written or synced.
		return engine.Completion{Slot: q.Slot, Errno: syscall.EBADF}
	}
	if !s.started {
		s.started = true
		if err := s.discard(q.Off); err != nil {
			return doneRead(q.Slot, 0, err)
		}
	}
	n, err := s.read(q.Buf, q.Off)
	if err == nil && n == len(q.Buf) {
		s.drop(q.Off, q.Off+int64(n)) // handed out whole: never asked again
	}
	return doneRead(q.Slot, n, err)
}

// read fills buf with the stream's bytes from off: what was kept, then
// the stream from its position, reading over a gap first. The stream's
// bytes it takes are kept unless buf is then full.
func (s *sequencer) read(buf []byte, off int64) (int, error) {
	n := 0
	if off < s.pos {
		n = s.fromKept(buf, off)
		if n == 0 {
			return 0, syscall.ESPIPE // never kept, or already handed out
		}
		if n == len(buf) || off+int64(n) < s.pos {
			return n, nil
		}
	}
	for s.pos < off {
		if eof, err := s.skip(off, true); eof || err != nil {
			return 0, err // at the end: a read of nothing
		}
	}
	from, err := n, error(nil)
	for n < len(buf) && err == nil {
		var k int
		k, err = s.end.ReadAt(buf[n:], s.pos)
		k = max(k, 0)
		n, s.pos = n+k, s.pos+int64(k)
		if k == 0 && err == nil {
			err = io.EOF
		}
	}
	if n < len(buf) {
		s.keepAt(s.pos-int64(n-from), buf[from:n])
	}
	if errors.Is(err, io.EOF) {
		err = nil // short at the end, as pread is at a file's
	}
	return n, err
}

// discard reads the stream up to off, before the first read, keeping
// nothing.
func (s *sequencer) discard(off int64) error {
	for s.pos < off {
		if eof, err := s.skip(off, false); eof || err != nil {
			return err
		}
	}
	return nil
}

// skip reads from the position toward off, keeping what it read when
// keep; eof says the stream ended first.
func (s *sequencer) skip(off int64, keep bool) (eof bool, err error) {
	buf := make([]byte, min(off-s.pos, gapChunk))
	n, err := s.end.ReadAt(buf, s.pos)
	n = max(n, 0)
	if keep {
		s.keepAt(s.pos, buf[:n])
	}
	s.pos += int64(n)
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		return false, err
	case n == 0:
		return true, nil
	}
	return false, nil
}

// keepAt adds b, the stream's bytes at off, to what is kept: a copy, as b
// may be a slot's buffer. Runs come in offset order, as the stream moves.
func (s *sequencer) keepAt(off int64, b []byte) {
	if len(b) > 0 {
		s.kept = append(s.kept, kept{off: off, b: append([]byte(nil), b...)})
	}
}

// fromKept copies what was kept from off into buf, across runs that
// follow each other, and returns how much.
func (s *sequencer) fromKept(buf []byte, off int64) int {
	n := 0
	for _, k := range s.kept {
		at := off + int64(n)
		if n == len(buf) || at < k.off {
			break
		}
		if at < k.end() {
			n += copy(buf[n:], k.b[at-k.off:])
		}
	}
	return n
}

// drop forgets what was kept of [from, to).
func (s *sequencer) drop(from, to int64) {
	out := s.kept[:0]
	for _, k := range s.kept {
		if k.end() <= from || k.off >= to {
			out = append(out, k)
			continue
		}
		if k.off < from {
			out = append(out, kept{off: k.off, b: k.b[:from-k.off]})
		}
		if k.end() > to {
			out = append(out, kept{off: to, b: k.b[to-k.off:]})
		}
	}
	s.kept = out
}
