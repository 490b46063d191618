package httpobj

import (
	"context"
	"net/url"
	"path/filepath"
	"testing"
)

func TestRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"https://u:p@h/x": "https://h/x",
		"https://h/x?X-Amz-Signature=abc&X-Amz-Expires=60":   "https://h/x?X-Amz-Signature=REDACTED&X-Amz-Expires=60",
		"https://h/x?sig=s&sv=2020&se=2030":                  "https://h/x?sig=REDACTED&sv=2020&se=2030",
		"https://h/x?access_token=t&page=2":                  "https://h/x?access_token=REDACTED&page=2",
		"https://h/x?X-Amz-Credential=AKIA%2F2024&a=b":       "https://h/x?X-Amz-Credential=REDACTED&a=b",
		"https://h/x?GoogleAccessId=g&Signature=s&Expires=1": "https://h/x?GoogleAccessId=REDACTED&Signature=REDACTED&Expires=1",
		"http://h:8080/path%20with%20space?plain=1&apikey=k": "http://h:8080/path%20with%20space?plain=1&apikey=REDACTED",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := Redact(u); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestBadInput: URLs and options that are wrong are refusals of their
// kind at Open, before any request, and print no password.
func TestBadInput(t *testing.T) {
	for _, raw := range []string{"ftp://h/x", "h/x", "http://", "http://u:secret@h/%zz", "s3://b/k"} {
		_, err := Open(context.Background(), raw, Options{})
		e := wantKind(t, err, ErrBadURL)
		noSecret(t, e.Error(), "secret")
	}
	for _, opts := range []Options{
		{Headers: []string{"NoColon"}},
		{Headers: []string{"Range: bytes=0-"}},
		{Headers: []string{"X: a\r\nY: b"}},
		{BearerTokenFile: filepath.Join(t.TempDir(), "missing")},
		{CAFile: filepath.Join(t.TempDir(), "missing")},
		{KeyFile: "key.pem"},
		{Connections: -1},
	} {
		_, err := Open(context.Background(), "http://127.0.0.1:1/x", opts)
		wantKind(t, err, ErrBadOption)
	}
}

func TestBodyLine(t *testing.T) {
	for _, tc := range []struct{ ctype, body, want string }{
		{"text/html", "<html><head><title>400 No required SSL certificate was sent</title></head>", "No required SSL certificate was sent"},
		{"text/plain; charset=utf-8", "quota exceeded\nmore", "quota exceeded"},
		{"text/plain", "404 page not found\n", "page not found"},
		{"application/xml", "<Error><Code>X</Code></Error>", ""},
		{"text/html", "<html>no title", ""},
		{"text/plain", "bell\x07 and\r escapes\x1b[31m", "bell and escapes[31m"},
	} {
		if got := bodyLine(tc.ctype, []byte(tc.body)); got != tc.want {
			t.Errorf("bodyLine(%q, %q) = %q, want %q", tc.ctype, tc.body, got, tc.want)
		}
	}
}
