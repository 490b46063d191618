package nbd

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
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
// parameters are taken), as RFC 3986 and libnbd read them (urisyntax.go):
// "+" is a plus sign everywhere, %HH the only escape. The export name is
// the path without its leading "/", percent-decoded; the port defaults to
// 10809. vsock, user info (PSK usernames), tls-* parameters on a plain
// URI, a parameter given twice, a fragment, and query parameters we do
// not know are refused with an error saying so. Parameters starting with
// "x-" are experimental by the spec and ignored.
func ParseURI(s string) (Address, error) {
	a := Address{URI: s}
	if !IsURI(s) {
		return a, fmt.Errorf("%q is not an NBD URI (want nbd://host[:port]/export or nbd+unix:///export?socket=PATH)", s)
	}
	a, err := parseURI(a)
	if err != nil {
		return a, fmt.Errorf("NBD URI %q: %w", redacted(s), err)
	}
	return a, nil
}

// redacted is s without the password its user info may hold: NBD
// refuses user info, and its refusal does not print a secret.
func redacted(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, set := u.User.Password(); set {
			return u.Redacted()
		}
	}
	return s
}

func parseURI(a Address) (Address, error) {
	u, err := splitURI(a.URI)
	if err != nil {
		return a, err
	}
	if strings.HasSuffix(u.scheme, "+vsock") {
		return a, fmt.Errorf("vsock is %w; use nbd:// or nbd+unix://", ErrNotSupported)
	}
	if u.hasUser {
		return a, fmt.Errorf("user info is for TLS with pre-shared keys, which is %w", ErrNotSupported)
	}
	if a.Export, err = unescape(strings.TrimPrefix(u.path, "/"), "export name", false); err != nil {
		return a, err
	}
	secure := strings.HasPrefix(u.scheme, "nbds")
	q, err := queryParams(u.query, secure)
	if err != nil {
		return a, err
	}
	host := ""
	if strings.HasSuffix(u.scheme, "+unix") {
		a, err = unixAddress(a, u, q)
	} else {
		a, host, err = tcpAddress(a, u, q)
	}
	if err != nil || !secure {
		return a, err
	}
	a.TLS, err = parseTLS(host, q)
	return a, err
}

// queryParams takes the parameters we understand, refusing the others
// as the URI spec says a parser should, TLS parameters on a URI without
// TLS, and any given twice (libnbd would take the last one).
func queryParams(query string, secure bool) (map[string]string, error) {
	ps, err := splitQuery(query)
	if err != nil {
		return nil, err
	}
	q := map[string]string{}
	for _, p := range ps {
		k := p.name
		switch {
		case strings.HasPrefix(k, "x-"):
			continue
		case k == "socket":
		case k == "tls-psk-file" || k == "tls-username":
			return nil, fmt.Errorf("%s is for TLS with pre-shared keys, which is %w", k, ErrNotSupported)
		case strings.HasPrefix(k, "tls-") && !secure:
			return nil, fmt.Errorf("%s is for TLS URIs (nbds://, nbds+unix://)", k)
		case tlsParams[k]:
		default:
			return nil, fmt.Errorf("unknown query parameter %q", k)
		}
		if _, twice := q[k]; twice {
			return nil, fmt.Errorf("more than one %s parameter", k)
		}
		q[k] = p.value
	}
	return q, nil
}

func unixAddress(a Address, u uriParts, q map[string]string) (Address, error) {
	if u.host != "" || u.hasPort {
		return a, fmt.Errorf("nbd+unix takes no host (%q); name the socket with ?socket=PATH", u.host)
	}
	sock := q["socket"]
	if sock == "" {
		return a, errors.New("nbd+unix needs ?socket=PATH")
	}
	// An abstract socket is spelt with a leading NUL (%00) in the URI and
	// with a leading "@" in Go's net package. A leading "@" in the URI is
	// a file's name, as libnbd reads it: "./" keeps Go's net package
	// from taking it for an abstract socket (another server's).
	switch sock[0] {
	case 0:
		sock = "@" + sock[1:]
	case '@':
		sock = "./" + sock
	}
	a.Network, a.Addr = "unix", sock
	return a, nil
}

// tcpAddress takes host and port; host is the name a TLS certificate is
// checked against by default.
func tcpAddress(a Address, u uriParts, q map[string]string) (Address, string, error) {
	if _, ok := q["socket"]; ok {
		return a, "", errors.New("socket= is for nbd+unix:// URIs")
	}
	host, err := hostOf(u.host)
	if err != nil {
		return a, "", err
	}
	port := DefaultPort
	if u.hasPort {
		// libnbd reads port 0 as the default port; a number past 65535
		// reaches getaddrinfo. Neither is what anyone means.
		n, err := strconv.Atoi(u.port)
		if err != nil || n < 1 || n > 65535 {
			return a, "", fmt.Errorf("port %s: want 1 to 65535", u.port)
		}
		port = strconv.Itoa(n)
	}
	a.Network, a.Addr = "tcp", net.JoinHostPort(host, port)
	return a, host, nil
}

// hostOf decodes the host: a name or IPv4 address, or an IPv6 address in
// brackets (a zone written %25, as RFC 6874 spells it).
func hostOf(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("nbd:// needs a host")
	}
	if !strings.HasPrefix(raw, "[") {
		host, err := unescape(raw, "host", false)
		if err == nil && strings.ContainsAny(host, ":/[]%@?#\\ \t\r\n") {
			err = fmt.Errorf("host %q is not a host name", host)
		}
		return host, err
	}
	host, err := unescape(raw[1:len(raw)-1], "IPv6 address", false)
	if err != nil {
		return "", err
	}
	addr, _, _ := strings.Cut(host, "%")
	if ip := net.ParseIP(addr); ip == nil || !strings.Contains(addr, ":") {
		return "", fmt.Errorf("%s is not an IPv6 address", raw)
	}
	return host, nil
}
