package webtest

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func serveDir(t *testing.T) string {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func get(t *testing.T, c *http.Client, url, rng string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestNginxRanges(t *testing.T) {
	s := Nginx(t, serveDir(t), Config{})
	resp, body := get(t, http.DefaultClient, s.URL+"/f", "bytes=2-4")
	if resp.StatusCode != 206 || body != "234" {
		t.Fatalf("got %d %q, want 206 \"234\"", resp.StatusCode, body)
	}
}

func TestNginxNoRanges(t *testing.T) {
	s := Nginx(t, serveDir(t), Config{NoRanges: true})
	resp, body := get(t, http.DefaultClient, s.URL+"/f", "bytes=2-4")
	if resp.StatusCode != 200 || body != "0123456789" || resp.Header.Get("Accept-Ranges") != "" {
		t.Fatalf("got %d %q (Accept-Ranges %q), want 200 and the whole file", resp.StatusCode, body, resp.Header.Get("Accept-Ranges"))
	}
}

func TestNginxTLSHTTP2(t *testing.T) {
	s := Nginx(t, serveDir(t), Config{TLS: true, HTTP2: true, Bearer: "tok"})
	pem, err := os.ReadFile(s.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	if resp, _ := get(t, c, s.URL+"/f", ""); resp.StatusCode != 401 {
		t.Fatalf("without the token: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", s.URL+"/f", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		t.Fatalf("with the token: %d over %s, want 200 over HTTP/2", resp.StatusCode, resp.Proto)
	}
}

func TestLighttpdRanges(t *testing.T) {
	s := Lighttpd(t, serveDir(t))
	resp, body := get(t, http.DefaultClient, s.URL+"/f", "bytes=7-")
	if resp.StatusCode != 206 || body != "789" {
		t.Fatalf("got %d %q, want 206 \"789\"", resp.StatusCode, body)
	}
}
