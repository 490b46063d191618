package copier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/qcow2"
	"github.com/ringcp/ringcp/stream"
)

// The engine.IOEnds of the SRCs that move their own bytes and are only
// read (end_src_linux.go): an object read at any offset (HTTP, S3), and a
// stream read in order (standard input, a pipe, a decompressor). Neither
// is ever written: writes, zeroing and flushes fail with EBADF.

// readOnlyIO is the write side of a SRC: there is none.
type readOnlyIO struct{}

func (readOnlyIO) WriteAt([]byte, int64) (int, error) { return 0, syscall.EBADF }
func (readOnlyIO) Zero(int64, int64, bool) error      { return syscall.EBADF }
func (readOnlyIO) Flush() error                       { return nil }
func (readOnlyIO) Settle() error                      { return nil }
func (readOnlyIO) Reserve(int64, int64, bool) error   { return syscall.EOPNOTSUPP }
func (readOnlyIO) Truncate(int64) error               { return syscall.EBADF }
func (readOnlyIO) PrepareTail() error                 { return nil }

// allData is Endpoint.Data of an end that cannot tell where its holes
// are: everything is data, and zero blocks are found by reading them.
func allData(off, end int64) (int64, int64, error) { return off, end, nil }

// objectIO reads an object at any offset, from many goroutines at once:
// each ReadAt is one range request (httpobj.Object's). With a digest to
// check (sum), each range read is handed to it as it completes.
type objectIO struct {
	readOnlyIO
	obj interface {
		ReadAt([]byte, int64) (int, error)
		Name() string
	}
	info engine.IOInfo
	sum  *expectRanges // nil: no digest to check
	firstCause
}

var _ engine.IOEnd = (*objectIO)(nil)

func (o *objectIO) Name() string                              { return o.obj.Name() }
func (o *objectIO) Prefetch(r []qcow2.Range)                  { prefetchOn(o.obj, r) }
func (o *objectIO) IOInfo() engine.IOInfo                     { return o.info }
func (o *objectIO) Data(off, end int64) (int64, int64, error) { return allData(off, end) }

// ReadAt is one range request; a range that meets the object's end is
// short, with io.EOF, as pread's would be.
func (o *objectIO) ReadAt(p []byte, off int64) (int, error) {
	n, err := o.obj.ReadAt(p, off)
	o.keep(err)
	if o.sum != nil && n > 0 && (err == nil || errors.Is(err, io.EOF)) {
		if serr := o.sum.add(off, p[:n]); serr != nil {
			return n, serr
		}
	}
	return n, err
}

// seqIO reads a stream in order: the engine's pool serves it on one
// goroutine (engine.IOInfo.Sequential), asking for each byte once, in
// order; a read that does not start where the last one ended is ESPIPE.
// When the stream's size is not known before its end (openEnded), the
// bytes past its end read as zeros, so that the reads the engine sent
// before it learned of the end complete; Data then says there is no data
// past it, and the copy ends there (end_stream_size_linux.go).
type seqIO struct {
	readOnlyIO
	name string
	r    io.Reader
	info engine.IOInfo

	// pos is how many of the stream's bytes were read, and ended says it
	// ended there (openEnded); ReadAt is called from one goroutine at a
	// time, Data from another.
	pos       atomic.Int64
	ended     atomic.Bool
	openEnded bool
	firstCause
}

var _ engine.IOEnd = (*seqIO)(nil)

func (s *seqIO) Name() string          { return s.name }
func (s *seqIO) IOInfo() engine.IOInfo { return s.info }

// ReadAt reads the next len(p) bytes of the stream, which must start at
// off.
func (s *seqIO) ReadAt(p []byte, off int64) (int, error) {
	pos := s.pos.Load()
	if s.ended.Load() && off >= pos {
		clear(p)
		return len(p), nil
	}
	if off != pos {
		return 0, &seekError{name: s.name, off: off, pos: pos}
	}
	n, err := readFull(s.r, p)
	s.pos.Add(int64(n))
	s.keep(err)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF):
		if s.openEnded {
			s.ended.Store(true)
			clear(p[n:])
			return len(p), nil
		}
		return n, io.EOF // short: the engine says SRC ended early
	}
	return n, err
}

// readFull reads until p is full, the stream ends (io.EOF, whatever was
// read) or fails. Unlike io.ReadFull it never turns a short end into
// io.ErrUnexpectedEOF: a decompressor says so of a cut stream, and that
// is a failure, not an end.
func readFull(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := r.Read(p[n:])
		n += k
		if err != nil {
			return n, err
		}
		if k == 0 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

// Data: with an open end, everything up to the stream's end is data (in
// steps, so that the engine asks again and learns of the end), nothing
// after it; otherwise everything is.
func (s *seqIO) Data(off, end int64) (int64, int64, error) {
	if !s.openEnded {
		return allData(off, end)
	}
	if s.ended.Load() {
		pos := s.pos.Load()
		if off >= pos {
			return end, end, nil
		}
		return off, min(end, pos), nil
	}
	return off, min(end, off+openEndStep), nil
}

// openEndStep is how much of a stream of unknown size the engine plans
// as data at a time: past the stream's end, it reads at most about this
// much zeros before it asks again.
const openEndStep = 16 << 20

// seekError is a read of a stream elsewhere than where it is.
type seekError struct {
	name     string
	off, pos int64
}

func (e *seekError) Error() string {
	return fmt.Sprintf("%s is a stream, read in order: a read at %d, the stream is at %d", e.name, e.off, e.pos)
}

func (e *seekError) Unwrap() error { return syscall.ESPIPE }

// firstCause keeps the first error an IOEnd met: the engine reports an errno
// (EIO for most), and the copy's error gives this too (what the server
// said, where the compressed data is damaged).
type firstCause struct{ first atomic.Pointer[error] }

func (c *firstCause) keep(err error) {
	if err != nil && !errors.Is(err, io.EOF) {
		c.first.CompareAndSwap(nil, &err)
	}
}

// met is the first error, or nil.
func (c *firstCause) met() error {
	if e := c.first.Load(); e != nil {
		return *e
	}
	return nil
}

// firstOf is the first of causes that has one, for a SRC read through
// another (an image on a web server: what the server said comes first).
// An interruption of the reads (a stop, or the copy's failure elsewhere)
// comes after any other: the failure of the image's own read (a cluster
// that does not decompress) interrupts the server's reads in flight, which
// is not why the copy failed.
func firstOf(causes ...func() error) func() error {
	return func() error {
		var stopped error
		for _, c := range causes {
			if c == nil {
				continue
			}
			switch err := c(); {
			case err == nil:
			case interruption(err):
				if stopped == nil {
					stopped = err
				}
			default:
				return err
			}
		}
		return stopped
	}
}

// interruption tells whether err is only the interruption of a SRC's
// reads (held.interrupt), not something the SRC met.
func interruption(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, stream.ErrClosed)
}

// srcError is a copy's or a read pass's error with the cause an end that
// moves its own bytes gave for it: both are matched by errors.Is and
// errors.As.
type srcError struct{ err, cause error }

func (e *srcError) Error() string   { return e.err.Error() + ": " + e.cause.Error() }
func (e *srcError) Unwrap() []error { return []error{e.err, e.cause} }
