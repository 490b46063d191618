package unpack

import (
	"bufio"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
)

// DefaultMaxUnit is the largest piece (xz block, zstd frame) decoded in
// memory by a worker, compressed or not. xz -6 -T0 writes 24 MiB blocks
// (three dictionaries), -9 -T0 192 MiB ones, which decode in place.
const DefaultMaxUnit = 64 << 20

// Options says how to unpack.
type Options struct {
	// Format forces a format; Auto (the zero value) recognizes it from
	// the first bytes; Raw passes the bytes as they are.
	Format Format
	// Threads is how many pieces decode at once; 0: GOMAXPROCS; 1: no
	// parallel decoding.
	Threads int
	// MaxUnit bounds one piece decoded in memory; 0: DefaultMaxUnit.
	MaxUnit int64
}

// Reader gives the decompressed bytes of a source in order.
type Reader struct {
	format Format
	src    *source
	dec    io.Reader
	out    atomic.Int64
	close  func() error
}

// NewReader recognizes src's format from its first bytes (unless
// opts.Format says) and decompresses it as it is read. An error here is
// one of reading those bytes, or of a header already wrong.
func NewReader(src io.Reader, opts Options) (*Reader, error) {
	if opts.Threads <= 0 {
		opts.Threads = runtime.GOMAXPROCS(0)
	}
	if opts.MaxUnit <= 0 {
		opts.MaxUnit = DefaultMaxUnit
	}
	s := &source{r: src}
	in := bufio.NewReaderSize(s, 1<<20)
	r := &Reader{format: opts.Format, src: s, close: func() error { return nil }}
	if r.format == Auto {
		head, err := in.Peek(HeadSize)
		if err != nil && err != io.EOF {
			return nil, err
		}
		r.format = Detect(head)
	}
	var err error
	switch r.format {
	case Raw:
		r.dec = in
	case Gzip:
		var z *gzip.Reader
		z, err = gzip.NewReader(in)
		r.dec = z
	case Bzip2:
		r.dec = bzip2.NewReader(in)
	case Xz:
		x := &xzSplitter{in: in, maxUnit: opts.MaxUnit}
		p := startPipeline(opts.Threads, x.split)
		r.dec, r.close = p, p.Close
	case Zstd:
		var z *zstdSplitter
		if z, err = newZstdSplitter(in, opts.MaxUnit, opts.Threads); err == nil {
			p := startPipeline(opts.Threads, z.split)
			r.dec = p
			// The workers share the decoder: close it after them.
			r.close = func() error {
				p.Close()
				z.dec.Close()
				return nil
			}
		}
	default:
		return nil, fmt.Errorf("unpack: unknown format %d", r.format)
	}
	if err != nil {
		return nil, r.failure(err)
	}
	if (r.format == Gzip || r.format == Bzip2) && opts.Threads > 1 {
		p := decodeAhead(r.dec, 4)
		r.dec, r.close = p, p.Close
	}
	return r, nil
}

// Format is the format being unpacked.
func (r *Reader) Format() Format { return r.format }

// In is how many compressed bytes were read from the source (a little
// ahead of the decoder: they are read in large pieces). Out is how many
// bytes Read gave. Both may be read from another goroutine.
func (r *Reader) In() int64  { return r.src.n.Load() }
func (r *Reader) Out() int64 { return r.out.Load() }

// Read gives the next decompressed bytes; io.EOF only at the true end of
// the compressed stream. Errors of the source come back as they were;
// damaged input is an error matching ErrCorrupt, cut input
// io.ErrUnexpectedEOF.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.dec.Read(p)
	r.out.Add(int64(n))
	if err != nil && err != io.EOF {
		err = r.failure(err)
	}
	return n, err
}

// failure keeps the source's own errors and cut input as they are, and
// calls whatever else a decoder says corrupt data.
func (r *Reader) failure(err error) error {
	switch {
	case r.src.failed(err):
		return err
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, ErrCorrupt), errors.Is(err, errStopped):
		return err
	case err == io.EOF:
		// A decoder that met the end of input where it wanted more.
		return io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %s: %w", ErrCorrupt, r.format, err)
}

// Close stops the decoding goroutines. Close the source first when a
// read of it may block (a network stream): they wait for it.
func (r *Reader) Close() error { return r.close() }

// source counts the bytes read from the transport and remembers its
// error, so that a transport's failure is never called corrupt data.
type source struct {
	r   io.Reader
	n   atomic.Int64
	mu  sync.Mutex // err is set by the goroutine that reads (a splitter)
	err error
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n.Add(int64(n))
	if err != nil && err != io.EOF {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	return n, err
}

// failed tells whether err is (or wraps) the source's own error.
func (s *source) failed(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err != nil && errors.Is(err, s.err)
}
