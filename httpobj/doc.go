// Package httpobj reads an object over HTTP or HTTPS as a copy's source:
// in parallel ranges when the server serves them, else as one stream.
//
// # Contract
//
// Open makes one request (GET with Range: bytes=0-0) that learns the
// object's size, its ETag and Last-Modified, whether the server serves
// ranges, and where redirects lead; anything wrong there is an *Error
// with Op "open", before a byte was read (a refusal). The returned Object
// is pinned to what Open found: every later request carries If-Match
// (strong ETag), If-Range (ETag, else Last-Modified) and
// If-Unmodified-Since, and every answer is checked (status, Content-Range,
// Content-Length, total size, ETag, Last-Modified), so that an object that
// changes during the copy fails it with ErrChanged and never yields bytes
// of two versions.
//
// ReadAt is one range request, safe from many goroutines; the pool keeps
// Options.Connections connections alive (HTTP/2, offered through ALPN,
// multiplexes them on one). Transient failures (resets, timeouts, a body
// shorter than announced, no byte for StallTimeout, 408, 429, 5xx but 501
// and 505) retry the rest of the range with exponential backoff and
// jitter, honouring Retry-After up to MaxWait, at most Retries times in a
// row without progress; then an *Error of kind ErrRetries names the URL,
// the offset and the last status. Permanent answers (401 and 403:
// ErrDenied; 404 and 410: ErrNotFound; 412 or another validator or size:
// ErrChanged; 416 or a range other than asked: ErrBadRange; TLS failures:
// ErrTLS) fail at once. Cancelling Open's context, or Close, ends every
// request in flight.
//
// A server without ranges gives Ranges() == false, a Logf line saying so,
// and Stream, which continues Open's own answer; a stream cut short is
// asked again and the bytes already read are skipped, when a validator
// shows it is the same object.
//
// Credentials never show: Name, Location and every error carry the URL
// without userinfo and with signature and token parameters REDACTED;
// basic auth (from the URL) and bearer tokens go to the URL's own host
// only, never to a redirect's target on another host.
//
// S3 reuses all of it through Options.Sign and Options.Explain (package
// s3obj).
package httpobj
