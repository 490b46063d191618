package httpobj

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// faultServer serves one object with Go's http.ServeContent (ranges,
// If-Range, If-Match, If-Unmodified-Since as the standard library answers
// them) and lets a test break any request: fault sees each request with
// its number (from 1) and either answers it itself (true) or leaves it to
// the object.
type faultServer struct {
	*httptest.Server
	mu       sync.Mutex
	data     []byte
	etag     string
	modTime  time.Time
	noRanges bool
	requests int
	fault    func(n int, w http.ResponseWriter, r *http.Request) bool
}

func newFaultServer(t testing.TB, data []byte) *faultServer {
	f := &faultServer{data: data, etag: `"v1"`}
	f.Server = httptest.NewServer(f)
	t.Cleanup(f.Close)
	return f
}

// URL of the object.
func (f *faultServer) url() string { return f.Server.URL + "/obj" }

// change replaces the object (etag "" for none).
func (f *faultServer) change(data []byte, etag string, modTime time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data, f.etag, f.modTime = data, etag, modTime
}

func (f *faultServer) setFault(fault func(n int, w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = fault
}

func (f *faultServer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

func (f *faultServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	n, data, etag, modTime, fault, noRanges := f.requests, f.data, f.etag, f.modTime, f.fault, f.noRanges
	f.mu.Unlock()
	if fault != nil && fault(n, w, r) {
		return
	}
	serve(w, r, data, etag, modTime, noRanges)
}

// serve answers r with data as ServeContent does, or, with noRanges, the
// whole of it always.
func serve(w http.ResponseWriter, r *http.Request, data []byte, etag string, modTime time.Time, noRanges bool) {
	w.Header().Set("Content-Type", "application/octet-stream")
	if etag != "" {
		w.Header().Set("ETag", etag)
	}
	if noRanges {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data)
		return
	}
	http.ServeContent(w, r, "", modTime, bytes.NewReader(data))
}

// rangeOf is the [first, last] a request's Range asks for (whole: -1).
func rangeOf(r *http.Request) (first, last int64) {
	spec, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes=")
	if !ok {
		return -1, -1
	}
	a, b, _ := strings.Cut(spec, "-")
	first, _ = strconv.ParseInt(a, 10, 64)
	last = -1
	if b != "" {
		last, _ = strconv.ParseInt(b, 10, 64)
	}
	return first, last
}

// cutWriter passes left bytes of the body on, then resets the connection
// (RST, not FIN: SO_LINGER 0), as a crashing server or a middlebox does.
type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if len(p) <= c.left {
		c.left -= len(p)
		return c.ResponseWriter.Write(p)
	}
	n, _ := c.ResponseWriter.Write(p[:c.left])
	c.left = 0
	resetConn(c.ResponseWriter, true)
	return n, errors.New("connection reset by the test")
}

// resetConn resets w's connection, after sending what was written to w
// (flush; without it, before any byte of the answer).
func resetConn(w http.ResponseWriter, flush bool) {
	rc := http.NewResponseController(w)
	if flush {
		rc.Flush()
	}
	conn, _, err := rc.Hijack()
	if err != nil {
		panic(fmt.Sprintf("hijack: %v", err))
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}
