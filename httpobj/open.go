package httpobj

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Open finds the object at rawURL (http or https) with one request, a GET
// of its first byte (Range: bytes=0-0), which learns its size, its ETag
// and Last-Modified, whether the server serves ranges (206), and where
// redirects lead. A presigned URL signs GET only, so no HEAD is sent.
//
// Transient failures are retried as reads are. Every error is an *Error
// with Op "open": a refusal, before anything was read. ctx governs every
// request of the object until Close: cancelling it stops them all at once.
//
// Redirects are followed (at most Options.MaxRedirects, never from https
// to http), and their target is pinned for every later request: that saves
// a round trip per range, and the pin on the ETag keeps it the same
// object. A target that later answers 401, 403, 404 or 410 (a presigned
// URL that expired mid-copy) is resolved again from the original URL once
// per range, then the refusal stands.
func Open(ctx context.Context, rawURL string, opts Options) (*Object, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// An unparsable URL is not printed: it may hold a password.
		name := "(unparsable URL)"
		if err == nil {
			name = Redact(u)
		}
		return nil, &Error{Op: "open", URL: name, Kind: ErrBadURL}
	}
	o := &Object{origin: u, user: u.User, size: -1}
	u.User = nil
	o.name = Redact(u)
	if opts.Name != "" {
		o.name = opts.Name
	}
	o.location.Store(u)
	if o.s, err = opts.settle(); err != nil {
		return nil, &Error{Op: "open", URL: o.name, Kind: ErrBadOption, Err: err}
	}
	if o.client, err = newClient(o.s); err != nil {
		return nil, &Error{Op: "open", URL: o.name, Kind: ErrBadOption, Err: err}
	}
	o.ctx, o.cancel = context.WithCancel(ctx)
	for tries := 1; ; tries++ {
		f := o.probe(false)
		if f == nil {
			break
		}
		if err := o.retry("open", 0, f, tries); err != nil {
			o.Close()
			return nil, err
		}
	}
	if !o.ranges {
		o.s.Logf("%s: the server does not serve ranges: one sequential stream", o.name)
	}
	return o, nil
}

// probe asks for the first byte (whole: for all of it, no Range) and
// learns the object from the answer. Without ranges (200), the answer's
// body is kept: it is the stream.
func (o *Object) probe(whole bool) *failure {
	ctx, cancel := context.WithCancelCause(o.ctx)
	dog := newWatchdog(cancel, o.s.StallTimeout)
	n := int64(1)
	if whole {
		n = -1
	}
	req, err := o.request(ctx, o.origin, 0, n, false)
	if err != nil {
		dog.stop()
		cancel(nil)
		return &failure{kind: ErrBadOption, cause: err}
	}
	resp, err := o.client.Do(req)
	if err != nil {
		dog.stop()
		cancel(nil)
		return o.netFailure(ctx, err)
	}
	dog.kick()
	b := &body{resp: resp, dog: dog, ctx: ctx, cancel: cancel}
	o.proto = resp.Proto
	o.etag, o.lastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if resp.StatusCode == http.StatusOK && resp.ContentLength == 0 {
		// An empty object (nginx answers 200, not 416): no range to ask.
		b.close()
		o.size, o.ranges = 0, true
		return nil
	}
	if resp.StatusCode == http.StatusOK {
		o.size = resp.ContentLength
		o.follow(o.origin, resp)
		o.first = b
		return nil
	}
	defer b.close()
	switch resp.StatusCode {
	case http.StatusPartialContent:
		cr := resp.Header.Get("Content-Range")
		_, _, total, ok := contentRange(cr)
		if !ok || total < 0 {
			return &failure{kind: ErrBadRange, status: resp.StatusCode, detail: fmt.Sprintf("Content-Range %q", cr)}
		}
		o.size, o.ranges = total, true
		o.follow(o.origin, resp)
		io.Copy(io.Discard, io.LimitReader(resp.Body, 2))
		return nil
	case http.StatusRequestedRangeNotSatisfiable:
		// The first byte of an empty object does not exist: nginx says
		// "bytes */0"; S3 says only InvalidRange, so ask for it whole.
		first, _, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if ok && first < 0 && total == 0 {
			o.size, o.ranges = 0, true
			return nil
		}
		if !whole {
			return o.probe(true)
		}
	}
	return o.refusal(resp)
}

// body is an answer being read: its watchdog, and the context (and its
// cancel) that ends the request.
type body struct {
	resp   *http.Response
	dog    *watchdog
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func (b *body) Read(p []byte) (int, error) {
	return watchedBody{b.resp.Body, b.dog}.Read(p)
}

func (b *body) close() {
	b.resp.Body.Close()
	b.stop()
}

// stop ends the request's watchdog and context.
func (b *body) stop() {
	b.dog.stop()
	b.cancel(nil)
}
