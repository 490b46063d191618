package unpack

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// unit is a piece of a compressed stream that decodes on its own (an xz
// block, a zstd frame). A worker decodes in into out; or, when stream is
// set, the consumer reads the piece in place, in order, and closes
// release when it is through, so that the splitter may read on.
type unit struct {
	in     []byte
	decode func(in []byte) ([]byte, error)
	out    []byte
	err    error
	done   chan struct{}
	// fallback decodes in in place when decode said errInPlace.
	fallback func(in []byte) io.Reader

	stream  io.Reader
	release chan struct{}
}

// pipeline gives the decoded bytes of a splitter's units in order: the
// splitter goroutine cuts the input, workers decode buffered units, the
// reader takes them in order. At most threads units wait decoded or in
// decoding ahead of the reader: memory is about threads × 2 units.
type pipeline struct {
	units chan *unit
	work  chan *unit
	stop  chan struct{}
	wg    sync.WaitGroup

	cur    *unit  // the stream unit being read, or nil
	left   []byte // what is left of the buffered unit being read
	spent  []byte // that unit's buffer, recycled once read
	err    error
	once   sync.Once
	closed atomic.Bool
}

// errStopped ends a splitter whose reader closed the pipeline.
var errStopped = errors.New("unpack: closed")

// startPipeline runs split in a goroutine with threads workers. split
// hands each unit to emit, in order; emit waits for a stream unit to be
// read through before it returns, and returns errStopped (to be
// returned) when the reader closed. split's error is given to the reader
// after every unit before it.
func startPipeline(threads int, split func(emit func(*unit) error) error) *pipeline {
	threads = max(threads, 1)
	p := &pipeline{units: make(chan *unit, threads), work: make(chan *unit, threads), stop: make(chan struct{})}
	for i := 0; i < threads; i++ {
		p.wg.Add(1)
		go p.worker()
	}
	p.wg.Add(1)
	go p.run(split)
	return p
}

func (p *pipeline) run(split func(emit func(*unit) error) error) {
	defer p.wg.Done()
	defer close(p.units)
	defer close(p.work)
	err := split(p.emit)
	if err != nil && err != errStopped {
		u := &unit{err: err, done: make(chan struct{})}
		close(u.done)
		p.emit(u)
	}
}

func (p *pipeline) emit(u *unit) error {
	select {
	case p.units <- u:
	case <-p.stop:
		return errStopped
	}
	if u.stream != nil {
		select {
		case <-u.release:
			return nil
		case <-p.stop:
			return errStopped
		}
	}
	if u.decode != nil {
		select {
		case p.work <- u:
		case <-p.stop:
			return errStopped
		}
	}
	return nil
}

func (p *pipeline) worker() {
	defer p.wg.Done()
	for u := range p.work {
		u.out, u.err = u.decode(u.in)
		if u.err != errInPlace {
			putBuf(u.in)
			u.in = nil
		}
		close(u.done)
	}
}

// Read gives the decoded bytes in order.
func (p *pipeline) Read(b []byte) (int, error) {
	if p.closed.Load() {
		return 0, errStopped
	}
	for len(p.left) == 0 {
		if p.spent != nil {
			putBuf(p.spent)
			p.spent = nil
		}
		if p.err != nil {
			return 0, p.err
		}
		if p.cur != nil {
			n, err := p.cur.stream.Read(b)
			if err == io.EOF {
				close(p.cur.release)
				p.cur = nil
				err = nil
			}
			if err != nil {
				p.err = err
			}
			if n > 0 || err != nil {
				return n, err
			}
			continue
		}
		u, ok := <-p.units
		if !ok {
			p.err = io.EOF
			continue
		}
		if u.stream != nil {
			p.cur = u
			continue
		}
		<-u.done
		if u.err == errInPlace {
			p.cur = &unit{stream: u.fallback(u.in), release: make(chan struct{})}
			continue
		}
		if u.err != nil {
			p.err = u.err
			continue
		}
		p.left, p.spent = u.out, u.out
	}
	n := copy(b, p.left)
	p.left = p.left[n:]
	return n, nil
}

// Close stops the splitter and the workers and waits for them (a worker
// finishes the unit it decodes).
func (p *pipeline) Close() error {
	p.closed.Store(true)
	p.once.Do(func() { close(p.stop) })
	// Let a worker blocked on nothing and the splitter blocked on a full
	// queue go: drain what they queued.
	go func() {
		for range p.units {
		}
	}()
	p.wg.Wait()
	return nil
}
