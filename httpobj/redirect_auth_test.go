package httpobj

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// authSpy is a server that serves want to anyone and records every
// Authorization and Cookie header it was sent.
type authSpy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newAuthSpy(t *testing.T, want []byte) *authSpy {
	s := &authSpy{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		for _, h := range []string{"Authorization", "Cookie"} {
			if v := r.Header.Get(h); v != "" {
				s.seen = append(s.seen, h+": "+v)
			}
		}
		s.mu.Unlock()
		serve(w, r, want, `"v1"`, zeroTime, false)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *authSpy) leaked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// TestCredentialsStayWithOrigin: whatever authenticates to the URL's own
// origin (scheme, host and port) — its userinfo as basic auth, a bearer
// token file, an Authorization or Cookie header given with Headers —
// never reaches another origin a redirect leads to: not a server on
// another port of the same host (the client's own redirects compare host
// names only), and not on the ranges sent to the pinned target after the
// redirect (Headers went with every request).
func TestCredentialsStayWithOrigin(t *testing.T) {
	want := pattern(200_000, 23)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("t0ken-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		userinfo  *url.Userinfo
		opts      func(*Options)
		otherHost func(string) string
	}{
		{name: "basic auth, another port", userinfo: url.UserPassword("alice", "s3cr3t"), otherHost: samehost},
		{name: "bearer file, another port", opts: func(o *Options) { o.BearerTokenFile = token }, otherHost: samehost},
		{name: "Authorization header, another host", otherHost: localhost,
			opts: func(o *Options) { o.Headers = []string{"Authorization: Bearer t0ken-secret"} }},
		{name: "Cookie header, another host", otherHost: localhost,
			opts: func(o *Options) { o.Headers = []string{"Cookie: session=t0ken-secret"} }},
		{name: "Authorization header, another port", otherHost: samehost,
			opts: func(o *Options) { o.Headers = []string{"Authorization: Bearer t0ken-secret"} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			other := newAuthSpy(t, want)
			home := httptest.NewServer(http.RedirectHandler(c.otherHost(other.URL)+"/obj", http.StatusFound))
			defer home.Close()
			u, _ := url.Parse(home.URL + "/moved")
			u.User = c.userinfo
			opts := quick(t)
			if c.opts != nil {
				c.opts(&opts)
			}
			o := mustOpen(t, u.String(), opts)
			got, err := readParallel(o, 20_000, 3)
			if err != nil {
				t.Fatal(err)
			}
			sameBytes(t, got, want)
			if leaked := other.leaked(); len(leaked) > 0 {
				t.Fatalf("%d requests to %s carried the origin's credentials, the first: %s", len(leaked), other.URL, leaked[0])
			}
		})
	}
}

// samehost is the URL as it is: httptest servers differ by port only.
func samehost(u string) string { return u }

// localhost names the server's host otherwise.
func localhost(u string) string { return strings.Replace(u, "127.0.0.1", "localhost", 1) }

// TestRedirectElsewhereRefused: a redirect to file:// (or any scheme but
// http and https) is refused at once, as the permanent answer it is, not
// retried as a transient failure.
func TestRedirectElsewhereRefused(t *testing.T) {
	for _, target := range []string{"file:///etc/passwd", "ftp://127.0.0.1/obj", "gopher://127.0.0.1/obj"} {
		var hits atomic.Int32
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			http.Redirect(w, r, target, http.StatusFound)
		}))
		_, err := Open(context.Background(), ts.URL+"/obj", quick(t))
		ts.Close()
		wantKind(t, err, ErrRefused)
		if hits.Load() != 1 {
			t.Errorf("redirect to %s: %d requests, want 1 (no retry)", target, hits.Load())
		}
	}
}
