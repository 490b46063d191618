package httpobj

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
)

// Object is an HTTP(S) object Open found: its size and validators, pinned
// for every later request, and the client that reaches it. ReadAt and
// Stream may be called from many goroutines at once.
type Object struct {
	s      *settings
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc

	origin   *url.URL                // as given, without userinfo
	user     *url.Userinfo           // the URL's userinfo: basic auth, never printed
	name     string                  // Redact(origin)
	location atomic.Pointer[url.URL] // where ranges go: the last redirect's target

	size         int64 // -1: unknown (a stream without Content-Length)
	etag         string
	lastModified string
	ranges       bool
	proto        string

	mu    sync.Mutex
	first *body // Open's answer, kept as the stream's start when there are no ranges
}

// Name is the URL without credentials: no userinfo, and presigned
// signatures and tokens REDACTED. Errors and logs name the object so.
func (o *Object) Name() string { return o.name }

// Location is where requests go now (redacted): the URL, or the target of
// its redirects.
func (o *Object) Location() string { return Redact(o.location.Load()) }

// Size is the object's length in bytes; -1 when the server did not say
// (a stream without ranges or Content-Length).
func (o *Object) Size() int64 { return o.size }

// ETag is the entity tag Open found ("" if none); LastModified likewise.
func (o *Object) ETag() string         { return o.etag }
func (o *Object) LastModified() string { return o.lastModified }

// Ranges tells whether the server serves ranges: ReadAt works. Without
// them the object is read once, in order, through Stream.
func (o *Object) Ranges() bool { return o.ranges }

// Pinned tells whether the object has a validator (ETag or
// Last-Modified): requests carry it (a strong ETag, Last-Modified) so
// that the server refuses to mix in another object, and answers are
// compared with it (a weak ETag, which requests cannot carry, must be in
// every answer). Without one, only the size is compared: a change that
// keeps the size is not seen.
//
// Content-MD5 and S3's x-amz-checksum-* are no substitute: an answer to a
// range carries the range's digest (Content-MD5), or none (S3 gives the
// whole object's checksums to whole or part requests, never to ranges).
func (o *Object) Pinned() bool { return o.pinned() }

// Proto is the protocol Open's answer came over: "HTTP/1.1", "HTTP/2.0".
func (o *Object) Proto() string { return o.proto }

// Connections is how many requests the object's pool keeps in flight at
// once: how many ReadAt calls a caller should have running.
func (o *Object) Connections() int { return o.s.Connections }

// Close cancels every request in flight at once and closes the pool's
// idle connections. Reads after Close fail.
func (o *Object) Close() error {
	o.cancel()
	o.mu.Lock()
	if o.first != nil {
		o.first.close()
		o.first = nil
	}
	o.mu.Unlock()
	o.client.CloseIdleConnections()
	return nil
}

// ReadAt reads len(p) bytes at off with one range request (more when one
// fails transiently: the rest of the range is asked again, pinned). It
// returns io.EOF with fewer bytes at the object's end, an *Error
// otherwise: ErrChanged if the object is no longer the one Open found,
// never bytes of another object.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if !o.ranges {
		return 0, &Error{Op: "read", URL: o.name, Off: off, Kind: ErrNoRanges}
	}
	if off < 0 {
		return 0, &Error{Op: "read", URL: o.name, Off: off, Kind: ErrBadRange, Detail: "negative offset"}
	}
	if off >= o.size {
		return 0, io.EOF
	}
	want := int(min(int64(len(p)), o.size-off))
	n, err := o.readRange(p[:want], off)
	if err == nil && want < len(p) {
		err = io.EOF
	}
	return n, err
}

// readRange fills p from off, retrying what is left after a transient
// failure. A request that moved progressFloor bytes, or a quarter of what
// it asked, before failing resets the count of tries: only requests that
// move (next to) nothing use the budget up, and a server that gives a
// byte and resets, every time, fails the read after a few. A refusal at a
// redirect's target (an expired presigned URL) is asked once of the
// original URL again, which may redirect somewhere new.
func (o *Object) readRange(p []byte, off int64) (int, error) {
	done, tries, resolved := 0, 0, false
	for done < len(p) {
		tries++
		asked := len(p) - done
		n, f := o.fetch(p[done:], off+int64(done))
		done += n
		if f == nil {
			continue
		}
		if n > 0 && n >= min(progressFloor, asked/4) {
			tries = 1
		}
		if !resolved && o.redirected() && (f.kind == ErrDenied || f.kind == ErrNotFound) {
			o.s.Logf("read %s at offset %d: %s at %s; asking %s again", o.name, off+int64(done), f.describe(), o.Location(), o.name)
			o.location.Store(o.origin)
			resolved = true
			continue
		}
		if err := o.retry("read", off+int64(done), f, tries); err != nil {
			return done, err
		}
	}
	return done, nil
}

// redirected tells whether requests go to a redirect's target.
func (o *Object) redirected() bool { return o.location.Load() != o.origin }

// follow pins the URL a request asked of target ended at, after its
// redirects, for the requests after it: each saves the redirects' round
// trips.
func (o *Object) follow(target *url.URL, resp *http.Response) {
	if final := resp.Request.URL; final.String() != target.String() {
		o.location.Store(final)
	}
}
