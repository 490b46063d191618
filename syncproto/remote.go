package syncproto

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// Remote is an end on another host, named by a URL:
// ssh://[user@]host[:port]/path. The path is absolute on that host;
// ssh://host/~/disk.img names disk.img in the remote user's home folder.
// Characters that URLs reserve (?, #, %, spaces) are percent-encoded in
// the path.
type Remote struct {
	User string
	Host string
	Port string
	Path string
	URL  string // as given
}

// IsRemote says whether an end names another host (ssh://).
func IsRemote(s string) bool { return strings.HasPrefix(s, "ssh://") }

// ParseRemote reads an ssh:// URL.
func ParseRemote(s string) (Remote, error) {
	u, err := url.Parse(s)
	bad := func(why string) (Remote, error) {
		shown := s
		if err == nil {
			shown = u.Redacted() // a password given is refused, and not printed
		}
		return Remote{}, fmt.Errorf("%q: %s (want ssh://[user@]host[:port]/path)", shown, why)
	}
	switch {
	case err != nil:
		return bad(err.Error())
	case u.Scheme != "ssh":
		return bad("not an ssh:// URL")
	case u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return bad("a query or fragment (percent-encode ? and # in the path)")
	case u.Hostname() == "":
		return bad("no host")
	case strings.HasPrefix(u.Hostname(), "-"):
		return bad("a host that starts with '-' would be read as an ssh option")
	case u.Path == "" || u.Path == "/":
		return bad("no path")
	}
	if _, set := u.User.Password(); set {
		return bad("a password in the URL (ssh takes keys and its own prompts, never a password here)")
	}
	r := Remote{User: u.User.Username(), Host: u.Hostname(), Port: u.Port(), Path: u.Path, URL: s}
	if strings.HasPrefix(r.User, "-") || strings.ContainsAny(r.User, " \t\r\n") {
		return bad("a user name ssh would misread")
	}
	// ssh hands both names to the shell commands of a configuration's
	// ProxyCommand, Match exec... (%h, %r); an ssh before OpenSSH 9.6
	// does not refuse metacharacters there (CVE-2023-51385).
	if !hostOK(r.Host, strings.HasPrefix(u.Host, "[")) {
		return bad("a host name with characters a shell would read (want letters, digits, '.', '-' and '_', or [IPv6])")
	}
	if strings.ContainsAny(r.User, shellMeta) || strings.ContainsFunc(r.User, unicode.IsControl) {
		return bad("a user name with characters a shell would read")
	}
	if rest, ok := strings.CutPrefix(r.Path, "/~/"); ok {
		r.Path = rest // relative to the remote user's home, where ssh starts
	}
	if strings.ContainsRune(r.Path, 0) {
		return bad("a NUL in the path")
	}
	return r, nil
}

var hostChars = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// hostOK: a name or IPv4 address of hostChars, or in brackets an IPv6
// address and its zone.
func hostOK(host string, bracketed bool) bool {
	if !bracketed {
		return hostChars.MatchString(host)
	}
	ip, zone, hasZone := strings.Cut(host, "%")
	return net.ParseIP(ip) != nil && (!hasZone || hostChars.MatchString(zone))
}

// shellMeta are the characters OpenSSH 9.6 refuses in a user name given
// on the command line, and more that a shell expands.
const shellMeta = "'`\"$\\;&<>|(){}*?[]!#~"

// Name is how errors name the remote end: [user@]host:path.
func (r Remote) Name() string {
	s := r.Host + ":" + r.Path
	if r.User != "" {
		s = r.User + "@" + s
	}
	return s
}
