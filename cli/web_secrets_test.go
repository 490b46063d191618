package cli

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestURLCredentialsNeverShown: a URL SRC's password (basic auth in its
// userinfo) and a presigned URL's signature are credentials: no line the
// command prints shows them, on success or on any refusal or failure,
// in --json, -v or the human lines (issue 23: "basic auth in the URL
// (never printed)").
func TestURLCredentialsNeverShown(t *testing.T) {
	data := bytes.Repeat([]byte("ringcp secrets\x00"), 70_001)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pass, _ := r.BasicAuth(); pass != "s3cr3t" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/obj" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "obj", time.Time{}, bytes.NewReader(data))
	}))
	defer ts.Close()
	withSecrets := func(path, pass string) string {
		return strings.Replace(ts.URL, "http://", "http://alice:"+pass+"@", 1) + path + "?X-Amz-Signature=sig0secret&X-Amz-Expires=60"
	}
	good := withSecrets("/obj", "s3cr3t")
	dir := t.TempDir()
	sum := fmt.Sprintf("sha256:%x", sha256.Sum256(data))
	wrongSum := "sha256:" + strings.Repeat("ab", 32)
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"copied, json", []string{"--json", good, filepath.Join(dir, "a")}, 0},
		{"copied, verbose", []string{"-v", "--progress", "always", good, filepath.Join(dir, "b")}, 0},
		{"copied, checksum", []string{"--checksum", "--json", good, filepath.Join(dir, "c")}, 0},
		{"not found, json", []string{"--json", withSecrets("/nothing", "s3cr3t"), filepath.Join(dir, "d")}, 2},
		{"wrong password", []string{withSecrets("/obj", "wr0ng-s3cr3t"), filepath.Join(dir, "e")}, 2},
		{"wrong password, json", []string{"--json", withSecrets("/obj", "wr0ng-s3cr3t"), filepath.Join(dir, "e")}, 2},
		{"size differs", []string{"--size", "1000", good, filepath.Join(dir, "f")}, 2},
		{"size differs, json", []string{"--json", "--size", "1000", good, filepath.Join(dir, "f")}, 2},
		{"into a directory", []string{good, dir}, 2},
		{"range past the end", []string{"--src-offset", "100M", good, filepath.Join(dir, "g")}, 2},
		{"checksum of a part", []string{"--expect-checksum", sum, "--length", "1000", good, filepath.Join(dir, "h")}, 2},
		{"checksum mismatch, json", []string{"--json", "--expect-checksum", wrongSum, good, filepath.Join(dir, "i")}, 3},
		{"bad flag, json", []string{"--json", "--no-such-flag", good, filepath.Join(dir, "j")}, 2},
		{"header without a colon", []string{"--header", "Authorization Bearer t0ken-s3cr3t", good, filepath.Join(dir, "k")}, 2},
		{"header with a line break, json", []string{"--json", "--header", "X-Token: t0ken-s3cr3t\r\nX-More: 1", good, filepath.Join(dir, "k")}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, c.args...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d:\n%s", r.code, c.code, r.stderr)
			}
			for _, secret := range []string{"s3cr3t", "sig0secret"} {
				if strings.Contains(r.stdout, secret) || strings.Contains(r.stderr, secret) {
					t.Errorf("the output shows %q:\nstdout: %s\nstderr: %s", secret, r.stdout, r.stderr)
				}
			}
		})
	}
}
