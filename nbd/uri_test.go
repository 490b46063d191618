package nbd

import (
	"strings"
	"testing"
)

// The examples of doc/uri.md, and what we refuse.
func TestParseURI(t *testing.T) {
	ok := []struct {
		uri                   string
		network, addr, export string
	}{
		{"nbd://example.com/disk", "tcp", "example.com:10809", "disk"},
		{"nbd+unix:///disk?socket=sock", "unix", "sock", "disk"},
		{"nbd://example.com/", "tcp", "example.com:10809", ""},
		{"nbd://example.com", "tcp", "example.com:10809", ""},
		{"nbd://example.com//disk", "tcp", "example.com:10809", "/disk"},
		{"nbd://example.com/hello%20world", "tcp", "example.com:10809", "hello world"},
		{"nbd://127.0.0.1:10810/x", "tcp", "127.0.0.1:10810", "x"},
		{"nbd://[::1]:777/x", "tcp", "[::1]:777", "x"},
		{"NBD://h/x", "tcp", "h:10809", "x"},
		{"nbd+unix:///?socket=/run/a%20b.sock", "unix", "/run/a b.sock", ""},
		{"nbd+unix:///?socket=%00/abstract", "unix", "@/abstract", ""},
		{"nbd://h/x?x-debug=1", "tcp", "h:10809", "x"},
	}
	for _, tc := range ok {
		a, err := ParseURI(tc.uri)
		if err != nil {
			t.Errorf("%s: %v", tc.uri, err)
			continue
		}
		if a.Network != tc.network || a.Addr != tc.addr || a.Export != tc.export || a.URI != tc.uri {
			t.Errorf("%s: got %+v", tc.uri, a)
		}
		if !IsURI(tc.uri) {
			t.Errorf("IsURI(%q) = false", tc.uri)
		}
	}
	bad := []struct{ uri, says string }{
		{"nbds://h/x", "TLS"},
		{"nbds+unix:///x?socket=s", "TLS"},
		{"nbd://h/x?tls-type=x509", "TLS"},
		{"nbd+vsock://1:2/x", "vsock"},
		{"nbd://user@h/x", "user info"},
		{"nbd://h/x?foo=1", `unknown query parameter "foo"`},
		{"nbd+unix:///x", "needs ?socket=PATH"},
		{"nbd+unix://h/x?socket=s", "takes no host"},
		{"nbd://h/x?socket=s", "for nbd+unix"},
		{"nbd:///x", "needs a host"},
		{"nbd+unix:///x?socket=a&socket=b", "more than one socket"},
		{"/dev/sda", "not an NBD URI"},
		{"http://h/x", "not an NBD URI"},
	}
	for _, tc := range bad {
		_, err := ParseURI(tc.uri)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: got %v, want an error saying %q", tc.uri, err, tc.says)
		}
	}
}

// Plain paths, even odd ones, are never NBD URIs.
func TestIsURI(t *testing.T) {
	for _, s := range []string{"nbd", "nbd:x", "nbd:/x", "./nbd://x", "disk.img", "", "file://x", "nbdx://h/"} {
		if IsURI(s) {
			t.Errorf("IsURI(%q) = true", s)
		}
	}
}
