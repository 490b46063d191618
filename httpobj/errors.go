package httpobj

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Kinds of failure. An *Error unwraps to exactly one of them, so that a
// caller tells them apart with errors.Is. Every kind but ErrRetries is
// permanent: retrying cannot help.
var (
	// ErrBadURL and ErrBadOption: the input is wrong (a refusal, exit 2).
	ErrBadURL    = errors.New("not an http(s) URL")
	ErrBadOption = errors.New("bad option")
	// ErrNotFound: 404 or 410 (S3: NoSuchKey, NoSuchBucket).
	ErrNotFound = errors.New("not found")
	// ErrDenied: 401 or 403 (S3: AccessDenied, InvalidAccessKeyId,
	// SignatureDoesNotMatch).
	ErrDenied = errors.New("access denied")
	// ErrChanged: the object is not the one Open found: another ETag or
	// Last-Modified, another size, 412 to If-Match, or the whole object
	// (200) in answer to If-Range.
	ErrChanged = errors.New("object changed since it was opened")
	// ErrBadRange: 416, or a 206 whose Content-Range or Content-Length is
	// not the range asked for.
	ErrBadRange = errors.New("server answered another range than asked")
	// ErrNoRanges: ReadAt on an object whose server does not serve ranges
	// (read it with Stream).
	ErrNoRanges = errors.New("server does not serve ranges")
	// ErrTLS: the server's certificate is not trusted, or ours refused.
	ErrTLS = errors.New("TLS failed")
	// ErrRedirects: more redirects than Options.MaxRedirects, or a loop.
	ErrRedirects = errors.New("too many redirects")
	// ErrRefused: any other answer that retrying cannot change (another
	// 4xx, 501, 505, a redirect without a location...).
	ErrRefused = errors.New("server refused")
	// ErrRetries: transient failures (reset, timeout, stall, short body,
	// 5xx, 429) outlasted Options.Retries.
	ErrRetries = errors.New("retries exhausted")
)

// Causes of transient failures, found in an ErrRetries *Error's Err (and
// in -v lines before it).
var (
	ErrStalled   = errors.New("no bytes for the stall timeout")
	ErrShortBody = errors.New("body ended before its announced length")
	ErrStatus    = errors.New("transient status")
)

// Error is a request that failed, or a refusal at Open: the object (its
// URL, with credentials removed), the first offset the request wanted,
// the server's last status and how many times it was tried.
type Error struct {
	Op       string // "open", "read", "stream"
	URL      string // redacted: no userinfo, no signature
	Off      int64
	Status   int // 0 when no answer came
	Attempts int
	Kind     error  // one of the Err* kinds above
	Detail   string // what the server said (S3: Code: Message), or ""
	Err      error  // the cause, or nil
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Op, e.URL)
	if e.Op != "open" {
		fmt.Fprintf(&b, " at offset %d", e.Off)
	}
	fmt.Fprintf(&b, ": %v", e.Kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (%d %s)", e.Status, http.StatusText(e.Status))
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (%d attempts)", e.Attempts)
	}
	return b.String()
}

// Unwrap gives the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Permanent tells whether retrying err cannot help: every *Error kind but
// ErrRetries, and anything that is not an *Error (a cancelled context).
func Permanent(err error) bool {
	return !errors.Is(err, ErrRetries)
}

// failure is one failed attempt: its kind (ErrRetries when another
// attempt may help), the status, what the server said, the cause, and how
// long the server asked us to wait (Retry-After).
type failure struct {
	kind      error
	status    int
	detail    string
	cause     error
	retryWait time.Duration
}

func (f *failure) transient() bool { return f.kind == ErrRetries }

// describe is what the attempt failed with, for a -v line.
func (f *failure) describe() string {
	var parts []string
	if f.status != 0 {
		parts = append(parts, fmt.Sprintf("%d %s", f.status, http.StatusText(f.status)))
	}
	if f.detail != "" {
		parts = append(parts, f.detail)
	}
	if f.cause != nil {
		parts = append(parts, f.cause.Error())
	}
	return strings.Join(parts, ": ")
}

// errorOf is the *Error that f ends op at off with, after attempts.
func (f *failure) errorOf(op, url string, off int64, attempts int) *Error {
	return &Error{Op: op, URL: url, Off: off, Status: f.status, Attempts: attempts,
		Kind: f.kind, Detail: f.detail, Err: f.cause}
}
