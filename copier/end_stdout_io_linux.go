package copier

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
)

// orderedWriter is a stream (standard output) as an engine.IOEnd: the
// pool's workers write pieces of the range at any offset, in any order,
// and one goroutine of its own writes them to the stream in offset
// order. A piece is copied (the engine reuses its buffer once WriteAt
// returns) and waits until the stream reaches it; a zeroed range waits
// as its length alone. At most outOfOrderMax bytes wait; a piece that
// would pass it waits for room, except the piece the stream needs next,
// so that the copy always advances: each worker holds one slot's
// request, the pool has a worker for every slot, and the next piece's
// request is in a slot no waiting worker holds.
//
// A write to the stream that fails (EPIPE: the reader went away) fails
// every call after it. stop (a signal) makes every waiting call return
// ECANCELED at once; the goroutine may stay blocked in a write to a
// reader that stopped reading, until the process exits.
type orderedWriter struct {
	name string
	f    io.Writer

	mu      sync.Mutex
	cond    sync.Cond
	pending map[int64]piece // by offset, not yet written out
	bytes   int64           // the bytes of the pieces in pending
	pos     int64           // the next offset the stream takes
	err     error           // the stream's first failure
	stopped bool
	closed  bool
	written int64 // bytes written out from the range's start
	start   int64
	// spare are buffers written out, kept for the pieces that follow: a
	// new block-sized allocation each time faults its pages in and wakes
	// the garbage collector, which made a copy to stdout 20 times slower
	// than one to a file on a busy host.
	spare      [][]byte
	spareBytes int64
	// bound, when not nil, says where SRC ended (a stream of unknown
	// size, once it did): what the engine writes past it (the zeros of
	// reads sent before it knew) is not the copy's and is dropped.
	bound func() (end int64, ended bool)
}

// piece is a write waiting for its turn: bytes, or n zeros.
type piece struct {
	b []byte
	n int64
}

// outOfOrderMax is the most bytes that wait for the stream in memory:
// a window of requests at the largest block the engine uses by default.
const outOfOrderMax = 64 << 20

var _ engine.IOEnd = (*orderedWriter)(nil)

func newOrderedWriter(name string, f io.Writer, start int64) *orderedWriter {
	w := &orderedWriter{name: name, f: f, pending: map[int64]piece{}, pos: start, start: start}
	w.cond.L = &w.mu
	go w.run()
	return w
}

func (w *orderedWriter) Name() string { return w.name }
func (w *orderedWriter) IOInfo() engine.IOInfo {
	return engine.IOInfo{Transport: "stdout", Detail: w.name + ", written in order"}
}
func (w *orderedWriter) ReadAt([]byte, int64) (int, error)         { return 0, syscall.EBADF }
func (w *orderedWriter) Data(off, end int64) (int64, int64, error) { return allData(off, end) }
func (w *orderedWriter) Settle() error                             { return nil }
func (w *orderedWriter) Reserve(int64, int64, bool) error          { return syscall.EOPNOTSUPP }
func (w *orderedWriter) Truncate(int64) error                      { return syscall.ESPIPE }
func (w *orderedWriter) PrepareTail() error                        { return nil }

// WriteAt queues a copy of p at off.
func (w *orderedWriter) WriteAt(p []byte, off int64) (int, error) {
	b := w.buffer(len(p))
	copy(b, p)
	if err := w.add(off, piece{b: b, n: int64(len(p))}); err != nil {
		w.recycle(b)
		return 0, err
	}
	return len(p), nil
}

// buffer is n bytes to copy a piece into: a spare one, or a new one.
func (w *orderedWriter) buffer(n int) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, b := range w.spare {
		if cap(b) >= n {
			w.spare = append(w.spare[:i], w.spare[i+1:]...)
			w.spareBytes -= int64(cap(b))
			return b[:n]
		}
	}
	return make([]byte, n)
}

// recycle keeps b for a later piece, up to outOfOrderMax bytes of them.
func (w *orderedWriter) recycle(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recycleLocked(b)
}

func (w *orderedWriter) recycleLocked(b []byte) {
	if b != nil && w.spareBytes+int64(cap(b)) <= outOfOrderMax {
		w.spare = append(w.spare, b)
		w.spareBytes += int64(cap(b))
	}
}

// Zero queues n zeros at off: a stream has no holes.
func (w *orderedWriter) Zero(off, n int64, _ bool) error { return w.add(off, piece{n: n}) }

// add queues q at off once there is room for it.
func (w *orderedWriter) add(off int64, q piece) error {
	if w.bound != nil {
		if end, ended := w.bound(); ended {
			if off >= end {
				return nil
			}
			q.n = min(q.n, end-off)
			if q.b != nil {
				q.b = q.b[:q.n]
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	size := int64(len(q.b))
	for w.err == nil && !w.stopped && off != w.pos && w.bytes > 0 && w.bytes+size > outOfOrderMax {
		w.cond.Wait()
	}
	if err := w.failed(); err != nil {
		return err
	}
	if _, dup := w.pending[off]; dup || off < w.pos {
		return fmt.Errorf("%s: a second write at %d: %w", w.name, off, syscall.ESPIPE)
	}
	w.pending[off] = q
	w.bytes += size
	w.cond.Broadcast()
	return nil
}

// failed is the error calls return once the stream failed or the copy
// stopped; w.mu is held.
func (w *orderedWriter) failed() error {
	switch {
	case w.err != nil:
		return w.err
	case w.stopped || w.closed:
		return syscall.ECANCELED
	}
	return nil
}

// Flush waits until every piece queued is out, then syncs a file or
// device behind the stream (a pipe has nothing to sync). A piece missing
// before the last queued one is a gap the engine never filled: EIO.
func (w *orderedWriter) Flush() error {
	w.mu.Lock()
	for w.failed() == nil && len(w.pending) > 0 {
		if _, ok := w.pending[w.pos]; !ok {
			w.mu.Unlock()
			return fmt.Errorf("%s: nothing was written at %d, before later writes: %w", w.name, w.pos, syscall.EIO)
		}
		w.cond.Wait()
	}
	err := w.failed()
	w.mu.Unlock()
	if err != nil {
		return err
	}
	return syncIfStorage(w.f)
}

// syncIfStorage fdatasyncs w when it is a regular file or a block
// device; a pipe, a socket or a writer of the caller's has nothing to
// make durable.
func syncIfStorage(w io.Writer) error {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFBLK:
		return unix.Fdatasync(int(f.Fd()))
	}
	return nil
}

// run writes the pieces out in order until the stream fails or the
// writer is closed.
func (w *orderedWriter) run() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		q, ok := w.pending[w.pos]
		for !ok && !w.closed && w.err == nil {
			w.cond.Wait()
			q, ok = w.pending[w.pos]
		}
		if !ok {
			return
		}
		w.mu.Unlock()
		n, err := w.out1(q)
		w.mu.Lock()
		w.written += n
		if err != nil {
			w.err = errnoOf(err) // the engine names the op, the end and the offset
			w.cond.Broadcast()
			return
		}
		delete(w.pending, w.pos)
		w.pos += q.n
		w.bytes -= int64(len(q.b))
		w.recycleLocked(q.b)
		w.cond.Broadcast()
	}
}

// zeroPage is what a zeroed range is written from.
var zeroPage = make([]byte, 1<<20)

// out1 writes one piece to the stream.
func (w *orderedWriter) out1(q piece) (int64, error) {
	if q.b != nil {
		n, err := w.f.Write(q.b)
		return int64(n), err
	}
	var done int64
	for done < q.n {
		n, err := w.f.Write(zeroPage[:min(int64(len(zeroPage)), q.n-done)])
		done += int64(n)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// errnoOf is the errno inside a write's error (EPIPE), or err.
func errnoOf(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	if errors.Is(err, io.ErrShortWrite) {
		return syscall.EIO
	}
	return err
}

// out is how many bytes of the range reached the stream.
func (w *orderedWriter) out() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written
}

// stop makes every waiting and later call return at once (a signal).
func (w *orderedWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.cond.Broadcast()
	w.mu.Unlock()
}

// close ends the goroutine once it is not writing; pieces not written
// are dropped.
func (w *orderedWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.pending = map[int64]piece{}
	w.cond.Broadcast()
	w.mu.Unlock()
}
