package nbd

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Address is where an NBD export lives, as an NBD URI names it
// (NetworkBlockDevice/nbd doc/uri.md).
type Address struct {
	Network string // "tcp" or "unix"
	Addr    string // host:port, or the socket's path ("@name" for an abstract socket)
	Export  string // the export name; "" is the server's default export
	URI     string // the URI as given, for messages
	// TLS, for nbds:// and nbds+unix://, says how the connection is
	// encrypted and the server checked (tls.go); nil for a plain one.
	TLS *TLS
}

// schemes we recognise as NBD URIs, so that IsURI routes them here and
// ParseURI refuses the ones we cannot serve with a clear reason.
var schemes = []string{"nbd", "nbd+unix", "nbds", "nbds+unix", "nbd+vsock", "nbds+vsock"}

// Schemes are the URI schemes IsURI takes for NBD URIs, lower case: those
// ParseURI serves and those it refuses with a reason.
func Schemes() []string { return append([]string(nil), schemes...) }

// IsURI reports whether s is meant as an NBD URI: it starts with an NBD
// scheme and "://" (case-insensitive). A plain path never is, so a file
// named "nbd" or "nbd:x" stays a file.
func IsURI(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok {
		return false
	}
	scheme = strings.ToLower(scheme)
	for _, k := range schemes {
		if scheme == k {
			return true
		}
	}
	return false
}

// ParseURI parses nbd://host[:port]/export and nbd+unix:///export?socket=PATH,
// and their TLS forms nbds:// and nbds+unix:// (tls.go says which tls-*
// parameters are taken). The export name is the path without its leading
// "/", percent-decoded; the port defaults to 10809. vsock, user info
// (PSK usernames), tls-* parameters on a plain URI, and query parameters
// we do not know are refused with an error saying so. Parameters starting
// with "x-" are experimental by the spec and ignored.
func ParseURI(s string) (Address, error) {
	a := Address{URI: s}
	if !IsURI(s) {
		return a, fmt.Errorf("%q is not an NBD URI (want nbd://host[:port]/export or nbd+unix:///export?socket=PATH)", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return a, fmt.Errorf("NBD URI %q: %w", s, err)
	}
	if strings.HasSuffix(u.Scheme, "+vsock") {
		return a, fmt.Errorf("NBD URI %q: vsock is %w; use nbd:// or nbd+unix://", s, ErrNotSupported)
	}
	if u.User != nil {
		return a, fmt.Errorf("NBD URI %q: user info is for TLS with pre-shared keys, which is %w", s, ErrNotSupported)
	}
	a.Export = strings.TrimPrefix(u.Path, "/")
	q := u.Query()
	secure := strings.HasPrefix(u.Scheme, "nbds")
	if err := checkQuery(s, q, secure); err != nil {
		return a, err
	}
	if strings.HasSuffix(u.Scheme, "+unix") {
		a, err = unixAddress(a, u, q)
	} else {
		a, err = tcpAddress(a, u, q)
	}
	if err != nil || !secure {
		return a, err
	}
	a.TLS, err = parseTLS(s, u.Hostname(), q)
	return a, err
}

// checkQuery refuses the parameters we do not understand, as the URI spec
// says a parser should, and TLS parameters on a URI without TLS.
func checkQuery(s string, q url.Values, secure bool) error {
	for k := range q {
		switch {
		case k == "socket":
		case strings.HasPrefix(k, "x-"):
		case strings.HasPrefix(k, "tls-") && !secure:
			return fmt.Errorf("NBD URI %q: %s is for TLS URIs (nbds://, nbds+unix://)", s, k)
		case tlsParams[k]:
		default:
			return fmt.Errorf("NBD URI %q: unknown query parameter %q", s, k)
		}
	}
	if len(q["socket"]) > 1 {
		return fmt.Errorf("NBD URI %q: more than one socket parameter", s)
	}
	return nil
}

func unixAddress(a Address, u *url.URL, q url.Values) (Address, error) {
	if u.Host != "" {
		return a, fmt.Errorf("NBD URI %q: nbd+unix takes no host (%q); name the socket with ?socket=PATH", a.URI, u.Host)
	}
	sock := q.Get("socket")
	if sock == "" {
		return a, fmt.Errorf("NBD URI %q: nbd+unix needs ?socket=PATH", a.URI)
	}
	// An abstract socket is spelt with a leading NUL (%00) in the URI and
	// with a leading "@" in Go's net package.
	if sock[0] == 0 {
		sock = "@" + sock[1:]
	}
	a.Network, a.Addr = "unix", sock
	return a, nil
}

func tcpAddress(a Address, u *url.URL, q url.Values) (Address, error) {
	if q.Has("socket") {
		return a, fmt.Errorf("NBD URI %q: socket= is for nbd+unix:// URIs", a.URI)
	}
	host := u.Hostname()
	if host == "" {
		return a, fmt.Errorf("NBD URI %q: nbd:// needs a host", a.URI)
	}
	port := u.Port()
	if port == "" {
		port = DefaultPort
	}
	a.Network, a.Addr = "tcp", net.JoinHostPort(host, port)
	return a, nil
}
