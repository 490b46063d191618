package httpobj

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// Stream reads the object from its start to its end, in order: the way to
// read an object whose server has no ranges, and a sequential consumer's
// way (a decompressor) when one connection is enough.
//
// A transient failure is retried where the stream stopped: with a range
// from there when the server has ranges, else by asking for the whole
// object again and skipping what was already read, which needs a
// validator (ETag or Last-Modified) that shows it is the same object.
type Stream struct {
	o     *Object
	pos   int64
	cur   *body
	tries int
	// failed is a failure met after bytes that Read returned first.
	failed *failure
}

// Stream starts reading the object from its start. Without ranges, the
// first call takes over Open's answer (no request); later calls ask again.
func (o *Object) Stream() *Stream {
	s := &Stream{o: o}
	o.mu.Lock()
	s.cur, o.first = o.first, nil
	o.mu.Unlock()
	return s
}

// Name is the object's.
func (s *Stream) Name() string { return s.o.name }

// Size is the object's (-1: unknown).
func (s *Stream) Size() int64 { return s.o.size }

// Offset is how many bytes Read returned.
func (s *Stream) Offset() int64 { return s.pos }

// Close ends the request in flight.
func (s *Stream) Close() error {
	if s.cur != nil {
		s.cur.close()
		s.cur = nil
	}
	return nil
}

// Read reads the next bytes of the object; io.EOF at its end (at Size, or
// where a server that did not announce a size ended the body cleanly).
func (s *Stream) Read(p []byte) (int, error) {
	for {
		if s.o.size >= 0 && s.pos >= s.o.size {
			s.Close()
			return 0, io.EOF
		}
		if s.failed == nil && s.cur == nil {
			s.tries++
			s.failed = s.open()
		}
		if s.failed != nil {
			if err := s.o.retry("stream", s.pos, s.failed, s.tries); err != nil {
				return 0, err
			}
			s.failed = nil
			continue
		}
		n, err := s.cur.Read(p)
		s.pos += int64(n)
		if n > 0 {
			s.tries = 0
		}
		if err == nil || (err == io.EOF && s.o.size < 0) {
			return n, err
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		s.failed = s.o.netFailure(s.cur.ctx, err)
		s.Close()
		if n > 0 {
			return n, nil
		}
	}
}

// open asks for the object from pos: a range when the server has them,
// else the whole object, whose first pos bytes are skipped.
func (s *Stream) open() *failure {
	o := s.o
	if !o.ranges && s.pos > 0 && !o.pinned() {
		return &failure{kind: ErrRetries, cause: errNoValidator}
	}
	b, f := o.get(s.pos)
	if f != nil {
		return f
	}
	if !o.ranges && s.pos > 0 {
		if _, err := io.CopyN(io.Discard, b, s.pos); err != nil {
			b.close()
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return o.netFailure(b.ctx, err)
		}
	}
	s.cur = b
	return nil
}

// get sends a pinned GET for the object from pos and checks the answer:
// 206 from pos to the end with ranges, else 200 for the whole object with
// Open's validators and size.
func (o *Object) get(pos int64) (*body, *failure) {
	ctx, cancel := context.WithCancelCause(o.ctx)
	dog := newWatchdog(cancel, o.s.StallTimeout)
	b := &body{dog: dog, cancel: cancel, ctx: ctx}
	target := o.location.Load()
	n := int64(-1)
	if o.ranges && pos == 0 {
		// bytes=0- rather than no Range: If-Range then applies.
		n = o.size
	}
	req, err := o.request(ctx, target, pos, n, true)
	if err != nil {
		b.stop()
		return nil, &failure{kind: ErrBadOption, cause: err}
	}
	if b.resp, err = o.client.Do(req); err != nil {
		b.stop()
		return nil, o.netFailure(ctx, err)
	}
	dog.kick()
	var f *failure
	if o.ranges {
		f = o.checkPartial(b.resp, pos, o.size-pos)
	} else {
		f = o.checkWhole(b.resp)
	}
	if f != nil {
		b.close()
		return nil, f
	}
	o.follow(target, b.resp)
	return b, nil
}

// checkWhole checks that resp is the whole object Open found.
func (o *Object) checkWhole(resp *http.Response) *failure {
	if resp.StatusCode != http.StatusOK {
		return o.refusal(resp)
	}
	if o.size >= 0 && resp.ContentLength >= 0 && resp.ContentLength != o.size {
		return &failure{kind: ErrChanged, status: resp.StatusCode, detail: fmt.Sprintf("size %d, was %d", resp.ContentLength, o.size)}
	}
	return o.checkPinned(resp)
}
