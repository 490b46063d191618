package httpobj

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRedirectLoop: a loop fails Open with ErrRedirects, after the limit.
func TestRedirectLoop(t *testing.T) {
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		next := "/a"
		if r.URL.Path == "/a" {
			next = "/b"
		}
		http.Redirect(w, r, next, http.StatusFound)
	}))
	defer ts.Close()
	opts := quick(t)
	opts.MaxRedirects = 5
	_, err := Open(context.Background(), ts.URL+"/a", opts)
	wantKind(t, err, ErrRedirects)
	if hits.Load() != 6 {
		t.Fatalf("%d requests, want 6 (the first and 5 redirects)", hits.Load())
	}
}

// presigner is an origin that redirects to a signed location; a signature
// works for `uses` requests (then 403, as an expired one), and the
// redirect hands out a new one each time.
type presigner struct {
	data       []byte
	uses       int
	mu         sync.Mutex
	signatures map[string]int
	redirects  int
}

func (p *presigner) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.URL.Path == "/obj" {
		p.redirects++
		sig := fmt.Sprintf("secret%d", p.redirects)
		p.signatures[sig] = 0
		http.Redirect(w, r, "/signed?X-Amz-Signature="+sig+"&X-Amz-Expires=60", http.StatusTemporaryRedirect)
		return
	}
	sig := r.URL.Query().Get("X-Amz-Signature")
	used, ok := p.signatures[sig]
	if !ok || used >= p.uses {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	p.signatures[sig]++
	serve(w, r, p.data, `"v1"`, zeroTime, false)
}

// TestPresignedRedirect: the signed target of a redirect is pinned (no
// redirect per range); when its signature expires (403), the original URL
// is asked again for a new one; no signature shows in names or errors.
func TestPresignedRedirect(t *testing.T) {
	want := pattern(1<<20, 14)
	p := &presigner{data: want, uses: 5, signatures: map[string]int{}}
	ts := httptest.NewServer(p)
	defer ts.Close()
	opts := quick(t)
	var lines []string
	var mu sync.Mutex
	opts.Logf = logTo(t, &lines, &mu)
	o := mustOpen(t, ts.URL+"/obj", opts)
	got, err := readParallel(o, 65536, 1)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, want)
	// 16 ranges and the probe, 5 per signature: 4 redirects.
	if p.redirects != 4 {
		t.Fatalf("%d redirects, want 4 (one per expired signature)", p.redirects)
	}
	noSecret(t, o.Location(), "secret")
	noSecret(t, strings.Join(lines, "\n"), "secret")

	// A signature that never works: the refusal stands, redacted.
	p.uses = 0
	_, err = o.ReadAt(make([]byte, 10), 0)
	wantKind(t, err, ErrDenied)
	noSecret(t, err.Error(), "secret")
}

// TestDowngradeRefused: a redirect from https to http is not followed.
func TestDowngradeRefused(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, []byte("data"), `"v1"`, zeroTime, false)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.RedirectHandler(plain.URL+"/obj", http.StatusFound))
	defer secure.Close()
	opts := quick(t)
	opts.CAFile = writeCA(t, secure)
	_, err := Open(context.Background(), secure.URL+"/obj", opts)
	wantKind(t, err, ErrRefused)
}

// writeCA writes ts's certificate as a CA file.
func writeCA(t testing.TB, ts *httptest.Server) string {
	path := filepath.Join(t.TempDir(), "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBasicAuthStaysHome: the URL's userinfo is sent as basic auth to its
// own host, never to the host a redirect leads to (127.0.0.1 and
// localhost are two hosts), and never printed.
func TestBasicAuthStaysHome(t *testing.T) {
	want := pattern(70_000, 15)
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
		serve(w, r, want, `"v1"`, zeroTime, false)
	}))
	defer other.Close()
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "alice" || pass != "s3cr3t" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, otherURL+"/obj", http.StatusFound)
			return
		}
		serve(w, r, want, `"v1"`, zeroTime, false)
	}))
	defer home.Close()
	u, _ := url.Parse(home.URL)
	u.User = url.UserPassword("alice", "s3cr3t")

	o := mustOpen(t, u.String()+"/obj", quick(t))
	got, err := readParallel(o, 10_000, 2)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, want)
	noSecret(t, o.Name(), "s3cr3t", "alice")

	o = mustOpen(t, u.String()+"/moved", quick(t))
	if got, err = readParallel(o, 10_000, 2); err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, want)
	if leaked.Load() {
		t.Fatal("the credentials went to the redirect's host")
	}

	u.User = url.UserPassword("alice", "wrong")
	_, err = Open(context.Background(), u.String()+"/obj", quick(t))
	wantKind(t, err, ErrDenied)
	noSecret(t, err.Error(), "wrong", "alice")
}

// TestProxy: requests go through Options.Proxy (as they would through
// HTTP_PROXY; the environment's proxy skips loopback, so the test names it).
func TestProxy(t *testing.T) {
	want := pattern(50_000, 16)
	f := newFaultServer(t, want)
	var proxied atomic.Int32
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		proxied.Add(1)
		r.Out.URL = r.In.URL // absolute-form: the proxy forwards to it
	}})
	defer proxy.Close()
	opts := quick(t)
	proxyURL, _ := url.Parse(proxy.URL)
	opts.Proxy = http.ProxyURL(proxyURL)
	o := mustOpen(t, f.url(), opts)
	got, err := readParallel(o, 7_000, 3)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, want)
	if int(proxied.Load()) != f.count() || f.count() < 8 {
		t.Fatalf("%d requests through the proxy, %d at the server", proxied.Load(), f.count())
	}
}
