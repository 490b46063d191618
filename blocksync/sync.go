package blocksync

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// Options tune Sync. The zero value is usable.
type Options struct {
	// Granule is the unit compared and written (DefaultGranule when 0; a
	// power of two from MinGranule to MaxGranule).
	Granule int
	// Window is how much of each end one read takes (4 MiB when 0),
	// rounded down to whole granules.
	Window int
	// Workers is how many windows are read and compared at once (4 when
	// 0): each reads SRC and DST together, so twice as many reads are in
	// flight.
	Workers int
	// Digest, when set, compares granules by their digests instead of
	// their bytes, as a sync across hosts must: for tests and benchmarks
	// of that path. Locally the bytes are cheaper.
	Digest Algorithm
	// Progress, when not nil, is updated as the sync goes.
	Progress *Progress
}

// Progress is read by other goroutines while Sync runs; every counter
// only grows.
type Progress struct {
	Compared atomic.Int64 // bytes of SRC compared with DST
	Changed  atomic.Int64 // bytes of DST written or zeroed
	Total    atomic.Int64 // SRC's size, once known (a sync across hosts: after the handshake)
}

// Stats is what a sync did.
type Stats struct {
	Size     int64 // SRC's size, and DST's after (a regular file)
	OldSize  int64 // DST's size before
	SrcRead  int64 // bytes read from SRC
	DstRead  int64 // bytes read from DST
	Written  int64 // bytes written to DST as data
	Zeroed   int64 // bytes of DST zeroed or punched
	Granules int64 // granules compared
	Changed  int64 // granules written or zeroed
}

func (o Options) withDefaults() (Options, error) {
	if o.Granule == 0 {
		o.Granule = DefaultGranule
	}
	if err := CheckGranule(o.Granule); err != nil {
		return o, err
	}
	if o.Window <= 0 {
		o.Window = 4 << 20
	}
	o.Window = max(o.Window/o.Granule, 1) * o.Granule
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Digest != 0 && !o.Digest.Valid() {
		return o, refuse(KindBadInput, "", fmt.Sprintf("unknown digest algorithm %d", o.Digest), nil)
	}
	return o, nil
}

// Sync makes dst hold src's bytes, writing only the granules that differ
// (see the package documentation), and returns once that is durable. A
// block device dst smaller than src is refused (*RefusedError) before
// anything is written. On an error or when ctx ends, DST holds a mix of
// old and new granules, and Sync says so by its error: it never reports
// success for a sync it did not finish and fsync.
func Sync(ctx context.Context, src Source, dst Target, opt Options) (Stats, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Stats{}, err
	}
	size, old := src.Size(), dst.Size()
	s := &syncRun{src: src, dst: dst, opt: opt, size: size, old: old}
	if !dst.Resizable() && old < size {
		return s.stats(), refuse(KindTooSmall, dst.Name(), fmt.Sprintf("DST holds %d bytes, less than SRC's %d", old, size), nil)
	}
	if err := s.run(ctx); err != nil {
		return s.stats(), err
	}
	if dst.Resizable() && old != size {
		if err := dst.Truncate(size); err != nil {
			return s.stats(), err
		}
	}
	return s.stats(), dst.Sync()
}

// syncRun is one Sync's shared state.
type syncRun struct {
	src       Source
	dst       Target
	opt       Options
	size, old int64
	next      atomic.Int64 // the next window to take

	srcRead, dstRead, written, zeroed, changed atomic.Int64
}

func (s *syncRun) stats() Stats {
	return Stats{Size: s.size, OldSize: s.old, SrcRead: s.srcRead.Load(), DstRead: s.dstRead.Load(),
		Written: s.written.Load(), Zeroed: s.zeroed.Load(), Granules: Granules(s.size, s.opt.Granule), Changed: s.changed.Load()}
}

// run has the workers take windows until none are left; the first error
// stops them all.
func (s *syncRun) run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var key [KeySize]byte
	rand.Read(key[:])
	var wg sync.WaitGroup
	for range s.opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.worker(ctx, key[:]); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	return context.Cause(ctx) // a worker's error, or why the caller's ctx ended
}

// worker syncs windows: both ends read at once, compared, the
// differences written.
func (s *syncRun) worker(ctx context.Context, key []byte) error {
	w := window{run: s, src: make([]byte, s.opt.Window), dst: make([]byte, s.opt.Window)}
	if s.opt.Digest != 0 {
		d, err := NewDigester(s.opt.Digest, key)
		if err != nil {
			return err
		}
		w.dig = d
	}
	for {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		off := s.next.Add(1)*int64(s.opt.Window) - int64(s.opt.Window)
		if off >= s.size {
			return nil
		}
		if err := w.sync(off, min(int64(s.opt.Window), s.size-off)); err != nil {
			return err
		}
	}
}

// window is a worker's buffers.
type window struct {
	run      *syncRun
	src, dst []byte
	dig      *Digester // nil: compare bytes
	changes  []Change
}

func (w *window) sync(off, n int64) error {
	s := w.run
	src, dst := w.src[:n], w.dst[:n]
	var dstErr error
	done := make(chan struct{})
	go func() { defer close(done); dstErr = w.readDst(dst, off) }()
	srcErr := readSrc(s.src, src, off)
	<-done
	s.srcRead.Add(n)
	if err := errors.Join(srcErr, dstErr); err != nil {
		return err
	}
	w.changes = w.compare(off, src, dst, w.changes[:0])
	for _, c := range w.changes {
		if err := w.apply(c, src[c.Off-off:c.Off-off+c.Len]); err != nil {
			return err
		}
	}
	if p := s.opt.Progress; p != nil {
		p.Compared.Add(n)
	}
	return nil
}

// readSrc reads all of p at off: SRC ending early means it shrank.
func readSrc(src Source, p []byte, off int64) error {
	n, err := src.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = &OpError{Op: "read", Path: src.Name(), Offset: off + int64(n), Err: fmt.Errorf("%w: SRC ended early (did it shrink during the sync?)", io.ErrUnexpectedEOF)}
	}
	return err
}

// readDst reads DST's side of a window; what lies past DST's size when
// the sync began reads as zeros, unread (other workers may be writing
// there already: a file grows as windows past its old end are written).
func (w *window) readDst(p []byte, off int64) error {
	n := 0
	if off < w.run.old {
		var err error
		n, err = w.run.dst.ReadAt(p[:min(int64(len(p)), w.run.old-off)], off)
		w.run.dstRead.Add(int64(n))
		if err != nil && err != io.EOF {
			return err
		}
	}
	clear(p[n:])
	return nil
}

// compare is Compare, or its digest form.
func (w *window) compare(off int64, src, dst []byte, out []Change) []Change {
	g := w.run.opt.Granule
	if w.dig == nil {
		return Compare(off, src, dst, g, out)
	}
	for i := 0; i < len(src); i += g {
		end := min(i+g, len(src))
		ds := w.dig.Sum(src[i:end])
		if ds == w.dig.Sum(dst[i:end]) {
			continue
		}
		out = appendChange(out, Change{Off: off + int64(i), Len: int64(end - i), Zero: ds == w.dig.Zero(end-i)})
	}
	return out
}

// apply writes or zeroes one change.
func (w *window) apply(c Change, data []byte) error {
	s := w.run
	var err error
	if c.Zero {
		err = s.dst.Zero(c.Off, c.Len)
		s.zeroed.Add(c.Len)
	} else {
		_, err = s.dst.WriteAt(data, c.Off)
		s.written.Add(c.Len)
	}
	s.changed.Add(Granules(c.Len, s.opt.Granule))
	if p := s.opt.Progress; p != nil {
		p.Changed.Add(c.Len)
	}
	return err
}
