package httpobj

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// request is a GET of target asking for [off, off+n) (n < 0: to the end;
// off == 0 and n < 0: no Range at all), pinned to the object Open found
// when pin is set.
func (o *Object) request(ctx context.Context, target *url.URL, off, n int64, pin bool) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return nil, err
	}
	home := sameOrigin(target, o.origin)
	for name, values := range o.s.header {
		if home || !credentialHeaders[name] {
			req.Header[name] = values
		}
	}
	// The bytes as published: a server must not compress them for us.
	req.Header.Set("Accept-Encoding", "identity")
	switch {
	case n >= 0:
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	case off > 0:
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", off))
	}
	if pin {
		o.pin(req)
	}
	// Credentials go to the URL's own origin, never to one a pinned
	// redirect leads to (the client's redirects drop them likewise).
	if home {
		switch {
		case o.user != nil:
			pass, _ := o.user.Password()
			req.SetBasicAuth(o.user.Username(), pass)
		case o.s.bearer != "":
			req.Header.Set("Authorization", "Bearer "+o.s.bearer)
		}
	}
	if o.s.Sign != nil {
		if err := o.s.Sign(req); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// pin makes req fail rather than return another object: If-Match with a
// strong ETag (412 if it changed), If-Range with the strong ETag or else
// Last-Modified (the whole object, 200, if it changed), and
// If-Unmodified-Since with Last-Modified. Weak ETags may not be used in
// either; the answer's own ETag is compared weakly (checkPinned).
func (o *Object) pin(req *http.Request) {
	strong := o.etag != "" && !strings.HasPrefix(o.etag, "W/")
	if strong {
		req.Header.Set("If-Match", o.etag)
	}
	if req.Header.Get("Range") == "" {
		return
	}
	switch {
	case strong:
		req.Header.Set("If-Range", o.etag)
	case o.lastModified != "":
		req.Header.Set("If-Range", o.lastModified)
	}
	if o.lastModified != "" {
		req.Header.Set("If-Unmodified-Since", o.lastModified)
	}
}

// pinned tells whether requests carry a validator, so that a changed
// object is refused by the server itself.
func (o *Object) pinned() bool { return o.etag != "" || o.lastModified != "" }

// checkPinned compares an answer's validators with Open's. An object
// whose only validator is a weak ETag (comparedOnly) is pinned by that
// comparison alone: an answer that does not show it cannot be told to be
// of the same object.
func (o *Object) checkPinned(resp *http.Response) *failure {
	etag := resp.Header.Get("ETag")
	if o.etag != "" && etag != "" && opaque(etag) != opaque(o.etag) {
		return &failure{kind: ErrChanged, status: resp.StatusCode, detail: fmt.Sprintf("ETag %s, was %s", etag, o.etag)}
	}
	if lm := resp.Header.Get("Last-Modified"); o.lastModified != "" && lm != "" && lm != o.lastModified {
		return &failure{kind: ErrChanged, status: resp.StatusCode, detail: fmt.Sprintf("Last-Modified %s, was %s", lm, o.lastModified)}
	}
	if etag == "" && o.comparedOnly() {
		return &failure{kind: ErrChanged, status: resp.StatusCode,
			detail: fmt.Sprintf("no ETag in the answer: the object is pinned by its weak ETag %s alone, which no request can carry, so each answer must show it", o.etag)}
	}
	return nil
}

// comparedOnly tells whether the object's one validator is a weak ETag:
// If-Match and If-Range take strong ones only (RFC 9110 13.1.1, 13.1.5),
// so no request is conditional, and only the answers' ETags, compared
// weakly, pin the object.
func (o *Object) comparedOnly() bool {
	return strings.HasPrefix(o.etag, "W/") && o.lastModified == ""
}

// opaque is an entity tag without its weak mark (RFC 9110 8.8.3.2's
// weak comparison).
func opaque(etag string) string { return strings.TrimPrefix(etag, "W/") }

// refusal is the failure an answer other than 200 or 206 means.
func (o *Object) refusal(resp *http.Response) *failure {
	f := &failure{status: resp.StatusCode}
	switch c := resp.StatusCode; {
	case c == 401 || c == 403:
		f.kind = ErrDenied
	case c == 404 || c == 410:
		f.kind = ErrNotFound
	case c == 412:
		f.kind = ErrChanged
	case c == 416:
		f.kind = ErrBadRange
	case c == 408 || c == 429 || c >= 500 && c != 501 && c != 505:
		f.kind, f.cause = ErrRetries, ErrStatus
		f.retryWait = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	case c >= 300 && c < 400:
		f.kind, f.detail = ErrRefused, "redirect not followed"
		if loc := resp.Header.Get("Location"); loc == "" {
			f.detail = "redirect without a Location"
		}
	default:
		f.kind = ErrRefused
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	f.detail = firstOf(f.detail, bodyLine(resp.Header.Get("Content-Type"), body))
	if o.s.Explain != nil {
		detail, kind := o.s.Explain(resp.StatusCode, body)
		if detail != "" {
			f.detail = detail
		}
		if kind != nil {
			f.kind = kind
		}
		if f.kind == ErrRetries && f.cause == nil {
			f.cause = ErrStatus
		}
	}
	return f
}

// bodyLine is what an error page says in one line: a text/plain body's
// first line, an HTML page's title (nginx: "400 No required SSL
// certificate was sent"), without the status code it repeats; "" for
// anything else. At most 200 bytes, printable only.
func bodyLine(contentType string, body []byte) string {
	text := string(body)
	switch {
	case strings.HasPrefix(contentType, "text/plain"):
		text, _, _ = strings.Cut(text, "\n")
	case strings.HasPrefix(contentType, "text/html"):
		_, after, ok := strings.Cut(text, "<title>")
		title, _, closed := strings.Cut(after, "</title>")
		if !ok || !closed {
			return ""
		}
		text = title
	default:
		return ""
	}
	text = strings.TrimSpace(text)
	if code, rest, ok := strings.Cut(text, " "); ok && len(code) == 3 && strings.Trim(code, "0123456789") == "" {
		text = rest
	}
	text = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, text)
	if len(text) > 200 {
		text = text[:200]
	}
	return text
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && secs >= 0 {
		return time.Duration(min(secs, 1<<31)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// netFailure classifies a request that got no (complete) answer. Its
// error may hold the URL (with a signature in it), which is dropped: the
// *Error names the URL, redacted.
func (o *Object) netFailure(ctx context.Context, err error) *failure {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if context.Cause(ctx) == ErrStalled && o.ctx.Err() == nil {
		return &failure{kind: ErrRetries, cause: ErrStalled}
	}
	if errors.Is(err, errRedirects) {
		return &failure{kind: ErrRedirects, detail: fmt.Sprintf("more than %d", o.s.MaxRedirects)}
	}
	if errors.Is(err, errDowngrade) || errors.Is(err, errRedirectScheme) {
		return &failure{kind: ErrRefused, cause: err}
	}
	if isTLSFailure(err) {
		return &failure{kind: ErrTLS, cause: err}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return &failure{kind: ErrRefused, detail: "no such host", cause: err}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &failure{kind: ErrRetries, cause: ErrShortBody}
	}
	// Resets, refused connections, timeouts, HTTP/2 stream resets: the
	// next attempt may well succeed.
	return &failure{kind: ErrRetries, cause: err}
}

// isTLSFailure: the certificate is not trusted (or not for this host),
// the server refused ours, or the server does not speak TLS at all.
func isTLSFailure(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
		record   tls.RecordHeaderError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &alert) || errors.As(err, &record)
}

// contentRange parses "bytes first-last/total" (total -1 for "*"), and
// "bytes */total" (first = last = -1).
func contentRange(v string) (first, last, total int64, ok bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	span, size, found := strings.Cut(spec, "/")
	if !found {
		return 0, 0, 0, false
	}
	total = -1
	if size != "*" {
		var err error
		if total, err = strconv.ParseInt(size, 10, 64); err != nil || total < 0 {
			return 0, 0, 0, false
		}
	}
	if span == "*" {
		return -1, -1, total, true
	}
	a, b, found := strings.Cut(span, "-")
	if !found {
		return 0, 0, 0, false
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first || total >= 0 && last >= total {
		return 0, 0, 0, false
	}
	return first, last, total, true
}
