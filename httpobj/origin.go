package httpobj

import (
	"net/http"
	"net/url"
	"strings"
)

// credentialHeaders are the request headers that authenticate: they go
// to the URL's own origin only, whoever set them (basic auth from the
// URL, a bearer token file, Options.Headers).
var credentialHeaders = map[string]bool{
	"Authorization": true, "Cookie": true, "Cookie2": true,
}

// dropCredentials removes the credential headers from h.
func dropCredentials(h http.Header) {
	for name := range credentialHeaders {
		h.Del(name)
	}
}

// sameOrigin tells whether a and b are one origin (RFC 6454): the same
// scheme, host and port, the scheme's default port filled in. Go's client
// compares host names only when it follows a redirect: another port of
// the same host, or a subdomain, would get the credentials too.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// port is u's port, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
