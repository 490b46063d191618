package httpobj

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// fetch is one request for len(p) bytes at off, pinned, read into p: the
// bytes it moved, and why it stopped short (nil: p is full).
func (o *Object) fetch(p []byte, off int64) (int, *failure) {
	ctx, cancel := context.WithCancelCause(o.ctx)
	defer cancel(nil)
	dog := newWatchdog(cancel, o.s.StallTimeout)
	defer dog.stop()
	target := o.location.Load()
	req, err := o.request(ctx, target, off, int64(len(p)), true)
	if err != nil {
		return 0, &failure{kind: ErrBadOption, cause: err}
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return 0, o.netFailure(ctx, err)
	}
	defer resp.Body.Close()
	dog.kick()
	if f := o.checkPartial(resp, off, int64(len(p))); f != nil {
		return 0, f
	}
	o.follow(target, resp)
	n, err := io.ReadFull(watchedBody{resp.Body, dog}, p)
	if err != nil {
		return n, o.netFailure(ctx, err)
	}
	// Seeing the end of the body lets the transport reuse the connection;
	// a byte past the range is a server that ignored the range's end.
	var extra [1]byte
	if k, _ := resp.Body.Read(extra[:]); k > 0 {
		return n, &failure{kind: ErrBadRange, status: resp.StatusCode, detail: "body longer than the range"}
	}
	return n, nil
}

// checkPartial checks that resp is the range [off, off+n) of the object
// Open found: 206, the Content-Range asked for, the total size Open saw,
// the same validators.
func (o *Object) checkPartial(resp *http.Response, off, n int64) *failure {
	switch resp.StatusCode {
	case http.StatusPartialContent:
	case http.StatusOK:
		if o.pinned() {
			return &failure{kind: ErrChanged, status: resp.StatusCode, detail: "the whole object came back to If-Range"}
		}
		return &failure{kind: ErrBadRange, status: resp.StatusCode, detail: "the range was ignored"}
	default:
		return o.refusal(resp)
	}
	cr := resp.Header.Get("Content-Range")
	first, last, total, ok := contentRange(cr)
	switch {
	case !ok || first < 0:
		return &failure{kind: ErrBadRange, status: resp.StatusCode, detail: fmt.Sprintf("Content-Range %q", cr)}
	case total >= 0 && total != o.size:
		return &failure{kind: ErrChanged, status: resp.StatusCode, detail: fmt.Sprintf("size %d, was %d", total, o.size)}
	case total < 0 && !o.pinned():
		// The size is all that tells an object without validators
		// from another: an answer must say it.
		return &failure{kind: ErrChanged, status: resp.StatusCode,
			detail: fmt.Sprintf("Content-Range %q does not say the size, the one thing that pins an object without ETag or Last-Modified", cr)}
	case first != off || last != off+n-1:
		return &failure{kind: ErrBadRange, status: resp.StatusCode,
			detail: fmt.Sprintf("Content-Range %q for bytes %d-%d", cr, off, off+n-1)}
	case resp.ContentLength >= 0 && resp.ContentLength != n:
		return &failure{kind: ErrBadRange, status: resp.StatusCode,
			detail: fmt.Sprintf("Content-Length %d for %d bytes", resp.ContentLength, n)}
	}
	return o.checkPinned(resp)
}

// errNoValidator is why a stream without ETag or Last-Modified cannot be
// resumed after a failure: the bytes after the restart could be another
// object's.
var errNoValidator = errors.New("no ETag or Last-Modified to resume the stream safely")
