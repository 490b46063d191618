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
		{"nbd://h/x?tls-type=x509", "is for TLS URIs"},
		{"nbds://h/x?tls-type=psk", "tls-type=psk is not supported"},
		{"nbds://h/x?tls-type=anon", "tls-type=anon is not supported"},
		{"nbds://h/x?tls-verify-peer=maybe", "want 0 or 1"},
		{"nbds://h/x?tls-psk-file=/k", `unknown query parameter "tls-psk-file"`},
		{"nbds+vsock://1:2/x", "vsock"},
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

// TestParseTLSURI: nbds and nbds+unix, their parameters, and the name
// the server's certificate is checked against.
func TestParseTLSURI(t *testing.T) {
	for _, tc := range []struct {
		uri, network, addr string
		want               TLS
	}{
		{"nbds://example.com/disk", "tcp", "example.com:10809", TLS{ServerName: "example.com", Verify: true}},
		{"nbds://[::1]:777/x?tls-certificates=/etc/pki/nbd", "tcp", "[::1]:777", TLS{CertDir: "/etc/pki/nbd", ServerName: "::1", Verify: true}},
		{"nbds://10.0.0.5/x?tls-hostname=hv2.example&tls-type=x509", "tcp", "10.0.0.5:10809", TLS{ServerName: "hv2.example", Verify: true}},
		{"nbds+unix:///x?socket=/run/s", "unix", "/run/s", TLS{ServerName: "localhost", Verify: true}},
		{"NBDS+UNIX:///x?socket=s&tls-verify-peer=0", "unix", "s", TLS{ServerName: "localhost"}},
	} {
		a, err := ParseURI(tc.uri)
		if err != nil {
			t.Errorf("%s: %v", tc.uri, err)
			continue
		}
		if a.Network != tc.network || a.Addr != tc.addr || a.TLS == nil || *a.TLS != tc.want {
			t.Errorf("%s: got %+v, TLS %+v; want %s %s, %+v", tc.uri, a, a.TLS, tc.network, tc.addr, tc.want)
		}
	}
	if a, err := ParseURI("nbd://h/x"); err != nil || a.TLS != nil {
		t.Errorf("nbd://h/x: TLS %+v, %v: want none", a.TLS, err)
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
