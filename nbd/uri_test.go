package nbd

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
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
		// A leading "@" is a file's name for libnbd, not Go's abstract
		// socket (issue 20's second review: another server's export).
		{"nbd+unix:///?socket=@disk.sock", "unix", "./@disk.sock", ""},
		{"nbd+unix:///?socket=%40disk.sock", "unix", "./@disk.sock", ""},
		{"nbd://h/x?x-debug=1", "tcp", "h:10809", "x"},
		// "+" is a plus sign, in the query as anywhere (issue 20: Go's
		// form decoding made it a space, and another socket).
		{"nbd+unix:///?socket=/x/a+b.sock", "unix", "/x/a+b.sock", ""},
		{"nbd+unix:///?socket=/x/a%2Bb.sock", "unix", "/x/a+b.sock", ""},
		{"nbd+unix:///?socket=/x/a%2bb.sock", "unix", "/x/a+b.sock", ""},
		{"nbd+unix:///?socket=/x/a%252Bb.sock", "unix", "/x/a%2Bb.sock", ""},
		{"nbd+unix:///a+b?socket=s", "unix", "s", "a+b"},
		{"nbd://h/a+b%20c", "tcp", "h:10809", "a+b c"},
		// libnbd's query splitting: "&", else ";"; names decoded too.
		{"nbd+unix:///?socket=/x/a;b.sock&x-y=1", "unix", "/x/a;b.sock", ""},
		{"nbd+unix:///?socket=/x/a%26b.sock", "unix", "/x/a&b.sock", ""},
		{"nbd+unix:///?socket=/x/a=b.sock", "unix", "/x/a=b.sock", ""},
		{"nbd+unix:///?socket=/x/a?b.sock", "unix", "/x/a?b.sock", ""},
		{"nbd+unix:///?socket=/x/a:b@c.sock", "unix", "/x/a:b@c.sock", ""},
		{"nbd+unix:///?%73ocket=/s", "unix", "/s", ""},
		{"nbd+unix:///?&&socket=/s&&", "unix", "/s", ""},
		{"nbd+unix:///?=ignored&socket=/s", "unix", "/s", ""},
		{"nbd+unix:///?x-flag;socket=/s", "unix", "/s", ""},
		{"nbd+unix:///?socket=/%C3%A9.sock", "unix", "/\u00e9.sock", ""},
		{"nbd://h/%C3%A9", "tcp", "h:10809", "\u00e9"},
		{"nbd://h/a%2Fb", "tcp", "h:10809", "a/b"},
		{"nbd://h:1/", "tcp", "h:1", ""},
		{"nbd://h:65535/", "tcp", "h:65535", ""},
		{"nbd://h:010/", "tcp", "h:10", ""},
		{"nbd://%68ost/x", "tcp", "host:10809", "x"},
		{"nbd://[fe80::1%25eth0]:5/x", "tcp", "[fe80::1%eth0]:5", "x"},
		{"nbd://[::ffff:127.0.0.1]/x", "tcp", "[::ffff:127.0.0.1]:10809", "x"},
		{"nbd://127.0.0.2/x", "tcp", "127.0.0.2:10809", "x"},
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
		{"nbds://h/x?tls-psk-file=/k", "tls-psk-file is for TLS with pre-shared keys"},
		{"nbds://h/x?tls-username=u", "tls-username is for TLS with pre-shared keys"},
		{"nbd://h/x?tls-certificates=/c", "is for TLS URIs"},
		{"nbds+vsock://1:2/x", "vsock"},
		{"nbd+vsock://1:2/x", "vsock"},
		{"nbd://user@h/x", "user info"},
		{"nbd://h/x?foo=1", `unknown query parameter "foo"`},
		{"nbd+unix:///x", "needs ?socket=PATH"},
		{"nbd+unix://h/x?socket=s", "takes no host"},
		{"nbd://h/x?socket=s", "for nbd+unix"},
		{"nbd:///x", "needs a host"},
		{"nbd+unix:///x?socket=a&socket=b", "more than one socket"},
		{"nbd+unix:///x?socket=a;socket=b", "more than one socket"},
		{"nbds://h/x?tls-hostname=a&tls-hostname=b", "more than one tls-hostname"},
		// What libnbd reads otherwise, or guesses at, is refused.
		{"nbd+unix:///?socket=/x/a;b.sock", `unknown query parameter "b.sock"`},
		{"nbd+unix:///?socket=/x/a b.sock", `" " must be percent-encoded`},
		{"nbd+unix:///?socket=/x/a|b.sock", `"|" must be percent-encoded`},
		{"nbd+unix:///?socket=/x/\u00e9.sock", `must be percent-encoded`},
		{"nbd+unix:///?socket=/x/a\nb.sock", `must be percent-encoded`},
		{"nbd+unix:///?socket=/x/a#b.sock", "fragment"},
		{"nbd://h/x#frag", "fragment"},
		{"nbd+unix:///?socket=/x/100%.sock", "not %HH"},
		{"nbd+unix:///?socket=/x/a%2", "not %HH"},
		{"nbd+unix:///?socket=/x/a%zz", "not %HH"},
		{"nbd+unix:///?socket=/x/a%00b", "encoded NUL"},
		{"nbd://h/a%00b", "encoded NUL"},
		{"nbd://h/a[b", `"[" must be percent-encoded`},
		{"nbd://h/a b", `" " must be percent-encoded`},
		{"nbd+unix:///?socket=", "needs ?socket=PATH"},
		{"nbd+unix:///?socket", "needs ?socket=PATH"},
		{"nbd+unix://:1/?socket=s", "takes no host"},
		{"nbd+unix://@/?socket=s", "user info"},
		{"nbd://h:0/x", "want 1 to 65535"},
		{"nbd://h:65536/x", "want 1 to 65535"},
		{"nbd://h:/x", "want a number"},
		{"nbd://h:1a/x", "want a number"},
		{"nbd://h x/", `" " must be percent-encoded`},
		{"nbd://h%2Fx/", "not a host name"},
		{"nbd://[::1/x", "closing"},
		{"nbd://[::1]x/", "after the host"},
		{"nbd://[1.2.3.4]/x", "not an IPv6 address"},
		{"nbd://[v1.x]/x", "not an IPv6 address"},
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

// UnixURI writes any socket path and export name so that ParseURI reads
// them back unchanged: every byte value, the characters that mean
// something in a URI, an abstract socket.
func TestUnixURIRoundTrip(t *testing.T) {
	var every []byte
	for c := 1; c < 256; c++ {
		every = append(every, byte(c))
	}
	for _, tc := range []struct{ sock, export string }{
		{"/x/a+b.sock", "a+b"},
		{"/x/a b;c&d=e?f#g%h.sock", "e x;p&o=r?t#%"},
		{"@abstract+name", ""},
		{"/" + string(every), string(every)},
	} {
		uri := UnixURI(tc.export, tc.sock)
		a, err := ParseURI(uri)
		if err != nil || a.Addr != tc.sock || a.Export != tc.export {
			t.Errorf("UnixURI(%q, %q) = %s: read back as %q, %q, %v", tc.export, tc.sock, uri, a.Export, a.Addr, err)
		}
	}
}

// FuzzParseURI: any string is read or refused without a panic; what is
// read holds no NUL but an abstract socket's first, has no space the URI
// did not encode (a "+" is never one), and reads back from UnixURI
// unchanged.
func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"nbd+unix:///a+b?socket=/x/a+b.sock", "nbd://[::1]:1/x", "nbds://h/?tls-hostname=a%20b", "nbd+unix:///?socket=%00x;x-a&b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseURI(s)
		if err != nil {
			return
		}
		if strings.Contains(a.Export, "\x00") || strings.Contains(a.Addr, "\x00") {
			t.Fatalf("%q: a NUL in %+v", s, a)
		}
		if a.Network == "unix" && !strings.Contains(s, "%") && strings.Contains(a.Addr, " ") {
			t.Fatalf("%q: a space in the socket %q that the URI never encoded", s, a.Addr)
		}
		if a.Network == "unix" {
			b, err := ParseURI(UnixURI(a.Export, a.Addr))
			if err != nil || b.Addr != a.Addr || b.Export != a.Export {
				t.Fatalf("%q: %+v reads back as %+v, %v", s, a, b, err)
			}
		}
	})
}

// TestDialNameNotResolved: a host name that does not resolve fails the
// connect with ErrResolve and the resolver's error, naming the host, and
// no errno: not an EIO that reads as a failing disk.
func TestDialNameNotResolved(t *testing.T) {
	_, err := Dial(context.Background(), "nbd://no-such-host.invalid/x", Options{})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrResolve) || e.Errno != 0 || errors.Is(err, syscall.EIO) {
		t.Fatalf("err %v: want an *Error wrapping ErrResolve, errno 0", err)
	}
	var dns *net.DNSError
	if !errors.As(err, &dns) || !strings.Contains(err.Error(), "cannot resolve the host name no-such-host.invalid") {
		t.Errorf("err %v: want the resolver's error, naming the host", err)
	}
}
