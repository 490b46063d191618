package stream

import (
	"errors"
	"io"
	"sync"
)

// ReadAhead reads a ranged source (an HTTP or S3 object, a file) in
// order, with depth ranges of chunk bytes in flight ahead of the reader,
// each on its own goroutine: over a network, one range's round trip no
// longer stalls the reader, and several connections carry the bytes.
// Memory is depth × chunk.
type ReadAhead struct {
	src   io.ReaderAt
	size  int64
	chunk int64
	slots []*slot
	stop  chan struct{}
	wg    sync.WaitGroup

	// failed is closed when a range failed, with its error in failure:
	// the stream can no longer end well, so the reader learns of it at
	// once rather than after the ranges before it, which may be stalling
	// (see Read).
	failed   chan struct{}
	failure  error
	failOnce sync.Once

	idx  int64  // the next chunk to read
	cur  []byte // what is left of the chunk being read
	held *slot  // the slot cur is in
	err  error
	once sync.Once
}

// slot is one buffer a goroutine fills with chunks idx, idx+depth, ...;
// the reader hands it back through free when it is done with a chunk.
type slot struct {
	buf   []byte
	ready chan result
	free  chan struct{}
}

type result struct {
	n   int
	err error
}

// ErrClosed is Read's answer after Close.
var ErrClosed = errors.New("read-ahead closed")

// NewReadAhead reads size bytes of src from offset 0. A failed range ends
// the stream with its error as soon as it failed: the bytes of the ranges
// before it that were still coming are not given.
func NewReadAhead(src io.ReaderAt, size int64, chunk, depth int) *ReadAhead {
	depth = max(depth, 1)
	// A small source needs no large buffers.
	chunk = int(max(min(int64(chunk), size), 1))
	ra := &ReadAhead{src: src, size: size, chunk: int64(chunk), stop: make(chan struct{}), failed: make(chan struct{})}
	for i := 0; i < depth; i++ {
		ra.slots = append(ra.slots, &slot{buf: make([]byte, chunk), ready: make(chan result, 1), free: make(chan struct{}, 1)})
	}
	for i, s := range ra.slots {
		ra.wg.Add(1)
		go ra.fill(s, int64(i))
	}
	return ra
}

// fill reads chunks first, first+depth, ... into s, each once the reader
// gave the buffer back.
func (ra *ReadAhead) fill(s *slot, first int64) {
	defer ra.wg.Done()
	depth := int64(len(ra.slots))
	for idx := first; idx*ra.chunk < ra.size; idx += depth {
		if idx != first {
			select {
			case <-s.free:
			case <-ra.stop:
				return
			}
		}
		off := idx * ra.chunk
		n := min(ra.chunk, ra.size-off)
		k, err := ra.src.ReadAt(s.buf[:n], off)
		if err == io.EOF && int64(k) == n {
			err = nil
		}
		if err == nil && int64(k) < n {
			err = io.ErrUnexpectedEOF
		}
		s.ready <- result{k, err}
		if err != nil {
			ra.failOnce.Do(func() {
				ra.failure = err
				close(ra.failed)
			})
			return
		}
	}
}

// Read gives the next bytes, in order.
func (ra *ReadAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.err != nil {
			return 0, ra.err
		}
		if ra.idx*ra.chunk >= ra.size {
			return 0, io.EOF
		}
		if ra.held != nil {
			// Its chunk is consumed: let it fetch its next one.
			ra.held.free <- struct{}{}
			ra.held = nil
		}
		s := ra.slots[ra.idx%int64(len(ra.slots))]
		var r result
		select {
		case r = <-s.ready:
		case <-ra.failed:
			// A range further on failed while this one is still
			// coming (a server may stall it for minutes): the
			// stream fails now, and its closer cuts this one short.
			r.err = ra.failure
		case <-ra.stop:
			return 0, ErrClosed
		}
		if r.err != nil {
			ra.err = r.err
			return 0, r.err
		}
		ra.cur, ra.held = s.buf[:r.n], s
		ra.idx++
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// Close stops the goroutines once their ranges in flight return (close
// the source first to cut those short).
func (ra *ReadAhead) Close() error {
	ra.once.Do(func() { close(ra.stop) })
	ra.wg.Wait()
	return nil
}
