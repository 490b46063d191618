package httpobj

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/delayproxy"
	"github.com/ringcp/ringcp/internal/webtest"
)

// TestNginxSizes reads files of every awkward size from nginx, in
// parallel ranges of an odd length, and as a stream.
func TestNginxSizes(t *testing.T) {
	root := t.TempDir()
	for _, n := range sizes {
		writeFile(t, root, fmt.Sprint(n), pattern(n, 1))
	}
	for _, cfg := range []webtest.Config{{}, {TLS: true}, {TLS: true, HTTP2: true}} {
		s := webtest.Nginx(t, root, cfg)
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%s/%d", s.URL[:5], n), func(t *testing.T) {
				want := pattern(n, 1)
				o := mustOpen(t, s.URL+"/"+fmt.Sprint(n), tlsOpts(s, Options{Connections: 4}))
				if !o.Ranges() || o.Size() != int64(n) || o.ETag() == "" {
					t.Fatalf("ranges %v size %d etag %q, want ranges, %d, an ETag", o.Ranges(), o.Size(), o.ETag(), n)
				}
				if cfg.HTTP2 && o.Proto() != "HTTP/2.0" {
					t.Fatalf("proto %s, want HTTP/2.0", o.Proto())
				}
				got, err := readParallel(o, 65536+3, 4)
				if err != nil {
					t.Fatal(err)
				}
				sameBytes(t, got, want)
				st := o.Stream()
				defer st.Close()
				got, err = io.ReadAll(st)
				if err != nil {
					t.Fatal(err)
				}
				sameBytes(t, got, want)
			})
		}
	}
}

// tlsOpts is opts trusting s's CA when s serves HTTPS.
func tlsOpts(s *webtest.Server, opts Options) Options {
	if s.TLSDir != "" {
		opts.CAFile = s.CAFile()
	}
	return opts
}

// TestNginxAuth: basic auth from the URL, a bearer token from a file, a
// required header, each against nginx configured to demand it; without
// them, ErrDenied at Open.
func TestNginxAuth(t *testing.T) {
	root := t.TempDir()
	want := pattern(100_000, 20)
	writeFile(t, root, "obj", want)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("tok-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  webtest.Config
		user string
		opts Options
	}{
		{"basic", webtest.Config{BasicAuth: "bob:pw-456"}, "bob:pw-456@", Options{}},
		{"bearer", webtest.Config{TLS: true, Bearer: "tok-123"}, "", Options{BearerTokenFile: token}},
		{"header", webtest.Config{Header: "X-Test: yes"}, "", Options{Headers: []string{"X-Test: yes"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := webtest.Nginx(t, root, tc.cfg)
			scheme, hostPath, _ := strings.Cut(s.URL, "://")
			_, err := Open(context.Background(), s.URL+"/obj", tlsOpts(s, Options{}))
			wantKind(t, err, ErrDenied)
			o := mustOpen(t, scheme+"://"+tc.user+hostPath+"/obj", tlsOpts(s, tc.opts))
			got, err := readParallel(o, 30_001, 3)
			if err != nil {
				t.Fatal(err)
			}
			sameBytes(t, got, want)
			noSecret(t, o.Name(), "pw-456", "tok-123")
		})
	}
}

// TestNginxTLS: an unknown CA is ErrTLS (permanent, at once); Insecure
// reads anyway; a server that demands a client certificate refuses a
// client without one and serves one with it.
func TestNginxTLS(t *testing.T) {
	root := t.TempDir()
	want := pattern(5000, 21)
	writeFile(t, root, "obj", want)
	s := webtest.Nginx(t, root, webtest.Config{TLS: true, ClientCert: true})
	_, err := Open(context.Background(), s.URL+"/obj", Options{Retries: 3})
	wantKind(t, err, ErrTLS)

	// nginx completes the handshake and answers 400 with a page that
	// says why; a TLS 1.3 server that checks in the handshake alerts.
	_, err = Open(context.Background(), s.URL+"/obj", Options{CAFile: s.CAFile()})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrTLS) && !(errors.Is(err, ErrRefused) && strings.Contains(e.Detail, "certificate")) {
		t.Fatalf("without a client certificate: %v, want ErrTLS or a refusal that says why", err)
	}
	t.Log(err)
	opts := Options{CAFile: s.CAFile(), CertFile: s.ClientCert(), KeyFile: s.ClientKey()}
	o := mustOpen(t, s.URL+"/obj", opts)
	got := make([]byte, len(want))
	if _, err := o.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, want)

	opts.CAFile, opts.Insecure = "", true
	o = mustOpen(t, s.URL+"/obj", opts)
	if _, err := o.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
}

// TestNginxKeepAlive: a parallel read of many ranges uses no more
// connections than Options.Connections (counted by a proxy in between).
func TestNginxKeepAlive(t *testing.T) {
	root := t.TempDir()
	want := pattern(4<<20, 22)
	writeFile(t, root, "obj", want)
	s := webtest.Nginx(t, root, webtest.Config{})
	p, err := delayproxy.Start(s.Addr, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	o := mustOpen(t, "http://"+p.Addr()+"/obj", Options{Connections: 3})
	got, err := readParallel(o, 64<<10, 3)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, want)
	if n := p.Accepted(); n > 3 {
		t.Fatalf("%d connections for 64 ranges, want at most 3", n)
	}
}

// TestNginxChanged: the file is replaced on the server between two
// ranges; the next range fails with ErrChanged.
func TestNginxChanged(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "obj", pattern(100_000, 23))
	s := webtest.Nginx(t, root, webtest.Config{})
	o := mustOpen(t, s.URL+"/obj", Options{})
	p := make([]byte, 50_000)
	if _, err := o.ReadAt(p, 0); err != nil {
		t.Fatal(err)
	}
	// nginx's ETag is mtime and size: a new mtime makes a new ETag.
	writeFile(t, root, "obj.new", pattern(100_000, 24))
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(root, "obj.new"), later, later)
	if err := os.Rename(filepath.Join(root, "obj.new"), filepath.Join(root, "obj")); err != nil {
		t.Fatal(err)
	}
	_, err := o.ReadAt(p, 50_000)
	wantKind(t, err, ErrChanged)
}

// TestLighttpd: the same reads against a second server.
func TestLighttpd(t *testing.T) {
	root := t.TempDir()
	for _, n := range sizes {
		writeFile(t, root, fmt.Sprint(n), pattern(n, 25))
	}
	s := webtest.Lighttpd(t, root)
	for _, n := range sizes {
		o := mustOpen(t, s.URL+"/"+fmt.Sprint(n), Options{Connections: 2})
		got, err := readParallel(o, 40_000-1, 2)
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, got, pattern(n, 25))
	}
}
