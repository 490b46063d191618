package copier

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/s3obj"
	"github.com/ringcp/ringcp/stream"
	"github.com/ringcp/ringcp/unpack"
)

// The kind of an http://, https:// or s3:// SRC: an object read through
// package httpobj (s3obj signs its requests), pinned to the size and ETag
// its first request found, so that an object that changes during the copy
// fails it and never yields a DST of two versions. A server that serves
// ranges is read in parallel ranges (WebOptions.Connections of them in
// flight), one without as one stream; a compressed object is read in
// order, ranges kept in flight ahead of the decompressor. Opening it is
// Prepare's: a URL that is wrong, missing, denied, or a server that does
// not answer, is a refusal before DST is touched. An object is only ever
// SRC.

func init() {
	registerKind(endKind{name: "web", inspect: inspectWeb}, "http", "https", "s3")
}

// inspectWeb opens the object and hands it to buildSrc.
func inspectWeb(p *Plan, uri string, r role) (*endpoint, error) {
	ep := &endpoint{path: uri, role: r, exists: true}
	isS3 := s3obj.IsURL(uri)
	what := map[bool]string{false: "HTTP object", true: "S3 object"}[isS3]
	ep.end = &srcEnd{ep: ep}
	ep.endFacts = srcFacts(what)
	if r == roleDst {
		return ep, refuseAsDst(uri, "an "+what)
	}
	obj, err := openWeb(p, uri, isS3)
	if err != nil {
		return ep, refuseErr(webKind(err), "", "cannot open SRC", err).on("Src")
	}
	ep.path = obj.Name() // no credentials in messages
	raw, err := webSource(obj, isS3)
	if err != nil {
		obj.Close()
		return ep, refuseErr(webKind(err), "", "cannot read SRC's first bytes", err).on("Src")
	}
	validator := obj.ETag()
	if validator == "" {
		validator = obj.LastModified()
	}
	k := srcKind{what: what, resumable: obj.Pinned() && obj.Size() >= 0, release: obj.Close,
		ident: identity{Path: obj.Name(), Kind: what, Size: obj.Size(), ETag: validator}}
	switch {
	case obj.Size() < 0:
		k.unresumable = "its server does not say its size"
	case !obj.Pinned():
		k.unresumable = "its server gives no ETag nor Last-Modified, so nothing tells whether another run would read the same object (one changed in place, same size, would give a DST of two versions)"
	}
	ep, err = buildSrc(p, ep, raw, k)
	if c, ok := raw.at.(*objectCache); ok && err == nil {
		offerRandom(p, ep, uri, isS3, c, obj.Connections())
	}
	return ep, err
}

// openWeb opens an HTTP(S) URL or an S3 object with the copy's options.
func openWeb(p *Plan, uri string, isS3 bool) (*httpobj.Object, error) {
	w := p.opts.Web
	h := w.httpOptions()
	if !isS3 {
		return httpobj.Open(context.Background(), uri, h)
	}
	return s3obj.Open(context.Background(), uri, s3obj.Options{HTTP: h, Endpoint: w.S3Endpoint, Region: w.S3Region, Profile: w.S3Profile})
}

// webKind sorts why an object could not be opened.
func webKind(err error) Kind {
	switch {
	case errors.Is(err, httpobj.ErrNotFound):
		return KindNotFound
	case errors.Is(err, httpobj.ErrDenied):
		return KindPermission
	case errors.Is(err, httpobj.ErrBadURL), errors.Is(err, httpobj.ErrBadOption):
		return KindBadInput
	}
	return KindCheckFailed
}

// webSource is the object's raw bytes: read at offsets when its server
// serves ranges, else as one stream, whose first bytes are kept for the
// run after they told the format.
func webSource(obj *httpobj.Object, isS3 bool) (rawSource, error) {
	raw := rawSource{name: obj.Name(), size: obj.Size(), transport: map[bool]string{false: "http", true: "s3"}[isS3],
		stop: func() { obj.Close() }}
	detail := []string{fmt.Sprintf("%s, %d bytes", obj.Proto(), obj.Size())}
	if obj.ETag() != "" {
		detail = append(detail, "ETag "+obj.ETag())
	} else if obj.LastModified() != "" {
		detail = append(detail, "Last-Modified "+obj.LastModified())
	} else {
		detail = append(detail, "not pinned: no ETag nor Last-Modified, so a change of the object is seen only when its size changes, and --resume is refused")
	}
	if loc := obj.Location(); loc != obj.Name() {
		detail = append(detail, "redirected to "+loc)
	}
	if !obj.Ranges() {
		raw.detail = strings.Join(append(detail, "the server does not serve ranges: read as one stream"), "; ")
		return streamWeb(obj, raw)
	}
	raw.detail = strings.Join(append(detail, fmt.Sprintf("ranges over %d connection(s)", obj.Connections())), "; ")
	raw.at = newObjectCache(obj, obj.Size(), obj.Connections())
	raw.head = make([]byte, min(unpack.HeadSize, max(obj.Size(), 0)))
	if _, err := raw.at.ReadAt(raw.head, 0); err != nil && !errors.Is(err, io.EOF) {
		return raw, err
	}
	raw.open = func() (io.Reader, func(), error) {
		ra := stream.NewReadAhead(obj, obj.Size(), readAheadChunk, obj.Connections())
		return ra, func() { ra.Close() }, nil
	}
	return raw, nil
}

// readAheadChunk is one range a compressed object is read in, ahead of
// its decompressor.
const readAheadChunk = 1 << 20

// streamWeb reads an object without ranges in order; the first bytes
// are peeked from the answer to Open's request, which the run goes on
// reading.
func streamWeb(obj *httpobj.Object, raw rawSource) (rawSource, error) {
	st := obj.Stream()
	br := bufio.NewReaderSize(st, 1<<20)
	head, err := br.Peek(unpack.HeadSize)
	if err != nil && !errors.Is(err, io.EOF) {
		st.Close()
		return raw, err
	}
	raw.head = head
	raw.open = onceReader(br, func() { st.Close() })
	return raw, nil
}

// onceReader opens r for the first run only: a stream is read once.
func onceReader(r io.Reader, closeIt func()) func() (io.Reader, func(), error) {
	used := false
	return func() (io.Reader, func(), error) {
		if used {
			return nil, nil, errors.New("a stream is read once: this plan ran already")
		}
		used = true
		return r, closeIt, nil
	}
}
