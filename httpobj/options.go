package httpobj

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"time"
)

// Defaults for the zero Options.
const (
	// DefaultConnections: the best of 1-32 on loopback, and within noise
	// of the best with a 20 ms round trip (BenchmarkRangedRead, whose
	// comment has the figures).
	DefaultConnections = 8
	DefaultRetries     = 5
	DefaultRetryWait   = 500 * time.Millisecond
	DefaultMaxWait     = 30 * time.Second
	DefaultStall       = 30 * time.Second
	DefaultRedirects   = 10
)

// Options says how to reach an object. The zero value is the defaults.
type Options struct {
	// Connections is how many requests may be in flight at once, each on
	// a connection of its own over HTTP/1.1 (kept alive between
	// requests), streams of one connection over HTTP/2. 0:
	// DefaultConnections.
	Connections int
	// Retries is how many times a request that failed transiently is
	// tried again before the read fails; a request that delivered bytes
	// before it failed starts the count again. 0: DefaultRetries;
	// negative: no retry.
	Retries int
	// RetryWait is the first wait before a retry, doubled each time, with
	// jitter; MaxWait caps any one wait, Retry-After included. 0: the
	// defaults.
	RetryWait time.Duration
	MaxWait   time.Duration
	// StallTimeout fails a request (to be retried) that delivers no byte
	// for this long, headers included. 0: DefaultStall.
	StallTimeout time.Duration
	// MaxRedirects is how many redirects one request follows. 0:
	// DefaultRedirects; negative: none.
	MaxRedirects int

	// CAFile replaces the system's CAs with the certificates in it.
	CAFile string
	// CertFile and KeyFile are a client certificate and its key (KeyFile
	// "": the key is in CertFile).
	CertFile, KeyFile string
	// Insecure skips the verification of the server's certificate.
	Insecure bool

	// Headers are sent with every request, each "Name: value".
	Headers []string
	// BearerTokenFile holds a token sent as "Authorization: Bearer ..."
	// to the URL's host (never to a host a redirect leads to).
	BearerTokenFile string
	// Proxy picks the proxy for a request; nil: http.ProxyFromEnvironment
	// (HTTP_PROXY, HTTPS_PROXY, NO_PROXY).
	Proxy func(*http.Request) (*url.URL, error)

	// Name names the object in errors and logs instead of its URL
	// (redacted): S3 says s3://bucket/key.
	Name string

	// Sign is called on every request just before it is sent (S3's
	// signature); a signed request follows no redirect.
	Sign func(*http.Request) error
	// Explain reads a refusal's body (at most 4 KiB) and may say what it
	// means: a detail for the error, and a kind that replaces the one
	// the status gives (nil: keep it). S3's XML errors use it.
	Explain func(status int, body []byte) (detail string, kind error)

	// Logf, when set, is told what a -v line would say: the server has
	// no ranges, a retry and why, a redirect re-resolved.
	Logf func(format string, args ...any)
}

// settings are Options with the defaults filled in and the files read.
type settings struct {
	Options
	header http.Header
	bearer string
}

func (o Options) settle() (*settings, error) {
	s := &settings{Options: o, header: http.Header{}}
	if s.Connections == 0 {
		s.Connections = DefaultConnections
	}
	if s.Connections < 0 {
		return nil, fmt.Errorf("Connections %d is negative", s.Connections)
	}
	switch {
	case s.Retries == 0:
		s.Retries = DefaultRetries
	case s.Retries < 0:
		s.Retries = 0
	}
	s.RetryWait = orDefault(s.RetryWait, DefaultRetryWait)
	s.MaxWait = orDefault(s.MaxWait, DefaultMaxWait)
	s.StallTimeout = orDefault(s.StallTimeout, DefaultStall)
	switch {
	case s.MaxRedirects == 0:
		s.MaxRedirects = DefaultRedirects
	case s.MaxRedirects < 0:
		s.MaxRedirects = 0
	}
	if s.Proxy == nil {
		s.Proxy = http.ProxyFromEnvironment
	}
	if s.Logf == nil {
		s.Logf = func(string, ...any) {}
	}
	if err := s.parseHeaders(); err != nil {
		return nil, err
	}
	if s.BearerTokenFile != "" {
		raw, err := os.ReadFile(s.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("bearer token: %v", err)
		}
		s.bearer = strings.TrimSpace(string(raw))
		if s.bearer == "" || strings.ContainsAny(s.bearer, "\r\n") {
			return nil, fmt.Errorf("bearer token file %s holds no token on one line", s.BearerTokenFile)
		}
	}
	return s, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// ownHeaders are set by the reader itself: pinning and ranges depend on
// them, so a user's value would silently break them.
var ownHeaders = map[string]bool{
	"Range": true, "If-Range": true, "If-Match": true, "If-None-Match": true,
	"If-Modified-Since": true, "If-Unmodified-Since": true, "Accept-Encoding": true,
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true,
}

func (s *settings) parseHeaders() error {
	for _, h := range s.Headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return fmt.Errorf("header %q is not 'Name: value'", h)
		}
		name = textproto.CanonicalMIMEHeaderKey(name)
		if ownHeaders[name] {
			return fmt.Errorf("header %s is set by the reader itself", name)
		}
		s.header.Add(name, strings.TrimSpace(value))
	}
	if s.BearerTokenFile != "" && s.header.Get("Authorization") != "" {
		return errors.New("both an Authorization header and a bearer token file")
	}
	return nil
}
