package e2e

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// A Go HTTP server for the importer's adversary tests: the faults of a
// broken or hostile world that nginx will not produce on demand (no
// validators at all, an object replaced between requests, bodies cut
// short, a body that stalls).

// faultServer serves one object at every path.
type faultServer struct {
	URL string

	mu   sync.Mutex
	body []byte
	// etag is sent as ETag when not ""; modified as Last-Modified when
	// not zero. Neither: the object has no validator.
	etag     string
	modified time.Time
	// cutAfter > 0 closes the connection after that many bytes of every
	// body whose range reaches cutFrom (Content-Length said more): a body
	// cut short.
	cutAfter int
	cutFrom  int64
	// stallFrom >= 0 stalls every body whose range reaches it after a
	// few bytes, the connection held open until the test ends.
	stallFrom int64
	// requests counts the GETs served; replaceAfter > 0 replaces body
	// with next (and etag with nextETag) once that many were served.
	requests     int
	replaceAfter int
	next         []byte
	nextETag     string
	nextModified time.Time

	release chan struct{}
}

// newFaultServer serves body with an ETag, ranges, no faults; the test
// sets the faults before the first request.
func newFaultServer(t *testing.T, body []byte) *faultServer {
	t.Helper()
	s := &faultServer{body: body, etag: `"v1"`, stallFrom: -1, release: make(chan struct{})}
	ts := httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = ts.URL
	t.Cleanup(func() {
		close(s.release)
		ts.Close()
	})
	return s
}

// state is what one request is answered from, the object replaced
// first when its time has come.
func (s *faultServer) state() (body []byte, etag string, modified time.Time, cut int, cutFrom, stall int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if s.replaceAfter > 0 && s.requests > s.replaceAfter && s.next != nil {
		s.body, s.etag, s.modified, s.next = s.next, s.nextETag, s.nextModified, nil
	}
	return s.body, s.etag, s.modified, s.cutAfter, s.cutFrom, s.stallFrom
}

func (s *faultServer) serve(w http.ResponseWriter, r *http.Request) {
	body, etag, modified, cut, cutFrom, stall := s.state()
	if etag != "" {
		w.Header().Set("ETag", etag)
	}
	// A fault hits a body that reaches its offset, not the one byte
	// that opens the object nor the 512 of a look at its footer.
	first, last := rangeOf(r.Header.Get("Range"), int64(len(body)))
	var out http.ResponseWriter = w
	switch {
	case last-first < 512:
	case stall >= 0 && last >= stall:
		out = &stallingWriter{ResponseWriter: w, left: 4096, release: s.release, done: r.Context().Done()}
	case cut > 0 && last >= cutFrom:
		out = &cuttingWriter{ResponseWriter: w, left: cut}
	}
	http.ServeContent(out, r, "disk", modified, bytes.NewReader(body))
}

// cuttingWriter passes left bytes of the body, then drops the
// connection.
type cuttingWriter struct {
	http.ResponseWriter
	left int
}

func (c *cuttingWriter) Write(p []byte) (int, error) {
	if len(p) > c.left {
		c.ResponseWriter.Write(p[:c.left])
		c.ResponseWriter.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	c.left -= len(p)
	return c.ResponseWriter.Write(p)
}

// stallingWriter passes left bytes of the body, then waits for the
// client to go or the test to end.
type stallingWriter struct {
	http.ResponseWriter
	left    int
	release chan struct{}
	done    <-chan struct{}
}

func (s *stallingWriter) Write(p []byte) (int, error) {
	if len(p) > s.left {
		s.ResponseWriter.Write(p[:s.left])
		s.ResponseWriter.(http.Flusher).Flush()
		select {
		case <-s.release:
		case <-s.done:
		}
		panic(http.ErrAbortHandler)
	}
	s.left -= len(p)
	return s.ResponseWriter.Write(p)
}
