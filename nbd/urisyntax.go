package nbd

import (
	"errors"
	"fmt"
	"strings"
)

// An NBD URI is an RFC 3986 URI (doc/uri.md: "any parsing, quoting or
// encoding issues ... must be answered by consulting IETF standards"),
// and libnbd reads it with libxml2's RFC 3986 parser (lib/uri.c,
// xmlParseURI) and its own query splitter (parse_uri_queries). Go's
// net/url is not that reader: its Query() is HTML form decoding, which
// turns "+" into a space, so nbd+unix:///?socket=/x/a+b.sock named the
// socket "/x/a b.sock" (another server, and exit 0). This file splits a
// URI as RFC 3986 and libnbd do:
//
//   - every character of every component must be one RFC 3986 allows
//     there, unencoded or percent-encoded; anything else (a space, "|",
//     "[" in a path, a bare "%", a byte above 0x7f) is an error, as
//     xmlParseURI makes it one;
//   - percent-decoding is %HH and nothing else: "+" is a plus sign;
//   - the query is split at "&", or at ";" where no "&" follows (libnbd's
//     rule, quirk included), each part at its first "="; names and values
//     are decoded after the split, so %26 and %3D are data;
//   - a fragment ("#...") is refused: libnbd drops it silently, so
//     socket=/run/a#b.sock would reach /run/a there; NBD URIs have no use
//     for one, and a "#" in a name is written %23.
//
// Where libnbd would accept something and guess (a parameter given twice:
// it takes the last; a parameter it does not know: it ignores it; an
// encoded NUL: it cuts the string there), ParseURI refuses instead, as
// the URI spec says a parser should diagnose what it does not understand.

// uriParts are a URI's components as RFC 3986 splits them, still
// percent-encoded (the scheme in lower case).
type uriParts struct {
	scheme   string
	userinfo string
	hasUser  bool
	host     string // a reg-name, or an IP-literal with its brackets
	port     string
	hasPort  bool
	path     string // "" or starting with "/"
	query    string
}

// splitURI splits s, which IsURI accepted, into its components and checks
// each character.
func splitURI(s string) (uriParts, error) {
	var u uriParts
	scheme, rest, _ := strings.Cut(s, "://")
	u.scheme = strings.ToLower(scheme)
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		return u, errors.New(`"#" starts a fragment, which NBD URIs do not have (write %23 for a "#" in a name)`)
	}
	rest, u.query, _ = strings.Cut(rest, "?")
	authority := rest
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, u.path = rest[:i], rest[i:]
	}
	if err := u.splitAuthority(authority); err != nil {
		return u, err
	}
	if err := checkChars(u.path, "path", "/"); err != nil {
		return u, err
	}
	return u, checkChars(u.query, "query", "/?")
}

// splitAuthority takes [userinfo@]host[:port] apart.
func (u *uriParts) splitAuthority(a string) error {
	if i := strings.LastIndexByte(a, '@'); i >= 0 {
		u.userinfo, u.hasUser, a = a[:i], true, a[i+1:]
		if err := checkChars(u.userinfo, "user info", ":"); err != nil {
			return err
		}
	}
	rest := ""
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return fmt.Errorf("host %q: an IPv6 address needs its closing \"]\"", a)
		}
		u.host, rest = a[:end+1], a[end+1:]
		if err := checkChars(u.host[1:end], "IPv6 address", ":"); err != nil {
			return err
		}
	} else {
		u.host = a
		if i := strings.IndexByte(a, ':'); i >= 0 {
			u.host, rest = a[:i], a[i:]
		}
		if err := checkChars(u.host, "host", ""); err != nil {
			return err
		}
	}
	switch {
	case rest == "":
		return nil
	case rest[0] != ':':
		return fmt.Errorf("%q after the host %s", rest, u.host)
	}
	u.port, u.hasPort = rest[1:], true
	if u.port == "" || strings.Trim(u.port, "0123456789") != "" {
		return fmt.Errorf("port %q: want a number", u.port)
	}
	return nil
}

// subDelims and unreserved are RFC 3986's character classes (section 2);
// a pchar (3.3) is one of them, ":", "@" or a percent-encoded octet.
const (
	subDelims  = "!$&'()*+,;="
	unreserved = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
)

// checkChars checks that every character of a component (named what) is
// unreserved, a sub-delim, one of extra, or a well-formed %HH. The path
// and the query take pchars (extra ":@" plus their own), the host none.
func checkChars(s, what, extra string) error {
	if what == "path" || what == "query" {
		extra += ":@"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
				return fmt.Errorf("%s %q: a %%-escape at %d is not %%HH (write %%25 for a %%)", what, s, i)
			}
			i += 2
		case strings.IndexByte(unreserved, c) >= 0, strings.IndexByte(subDelims, c) >= 0, strings.IndexByte(extra, c) >= 0:
		default:
			return fmt.Errorf("%s %q: %q must be percent-encoded (%%%02X)", what, s, string([]byte{c}), c)
		}
	}
	return nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// unescape decodes %HH (checkChars made sure each is well formed) and
// nothing else. A NUL is refused unless nulFirst allows one as the first
// byte (an abstract socket's name): a C reader such as libnbd would end
// the string there, and no name or path holds one.
func unescape(s, what string, nulFirst bool) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			c = byte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		}
		if c == 0 && !(nulFirst && len(b) == 0) {
			return "", fmt.Errorf("%s %q holds an encoded NUL (%%00)", what, s)
		}
		b = append(b, c)
	}
	return string(b), nil
}

// param is one name=value of a query, decoded.
type param struct{ name, value string }

// splitQuery splits a query as libnbd's parse_uri_queries does: parts end
// at the first "&", or where there is none at the first ";"; an empty part
// is skipped, "=value" is ignored, "name" alone has the value "". Names
// and values are decoded after the split.
func splitQuery(q string) ([]param, error) {
	var ps []param
	for q != "" {
		end := strings.IndexByte(q, '&')
		if end < 0 {
			end = strings.IndexByte(q, ';')
		}
		if end < 0 {
			end = len(q)
		}
		part := q[:end]
		q = q[end:]
		if q != "" {
			q = q[1:]
		}
		name, value, _ := strings.Cut(part, "=")
		if name == "" {
			continue // "" or "=value"
		}
		var p param
		var err error
		if p.name, err = unescape(name, "query parameter", false); err != nil {
			return nil, err
		}
		if p.value, err = unescape(value, p.name, p.name == "socket"); err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// UnixURI is the nbd+unix URI of export at the Unix socket path sock,
// every character that is not plainly safe percent-encoded ("+" and
// spaces included), so that ParseURI and libnbd read sock back exactly.
// A leading "@" (an abstract socket in Go's spelling) becomes %00.
func UnixURI(export, sock string) string {
	if strings.HasPrefix(sock, "@") {
		sock = "\x00" + sock[1:]
	}
	return "nbd+unix:///" + escape(export) + "?socket=" + escape(sock)
}

// escape percent-encodes every byte of s but the unreserved ones and "/".
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '/' || strings.IndexByte(unreserved, c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
