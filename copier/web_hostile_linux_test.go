package copier_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
)

// Servers that lie or misbehave, each behind a real connection: whatever
// one does, a copy either succeeds with DST equal to the object byte for
// byte, or fails (or is refused) with no new DST left behind. Never a DST
// of other bytes with no error.

// hostile is one misbehaving server: its handler serves data, and the
// outcome the copy must have (ok: DST is data; otherwise an error).
type hostile struct {
	name    string
	ok      bool
	handler func(n int64, data []byte, w http.ResponseWriter, r *http.Request)
}

// serveRange answers like a good server (ranges, ETag "v1").
func serveRange(data []byte, w http.ResponseWriter, r *http.Request) {
	w.Header().Set("ETag", `"v1"`)
	http.ServeContent(w, r, "obj", time.Time{}, bytes.NewReader(data))
}

// requested is the range a request asks for: [first, last]; ok false
// without one.
func requested(r *http.Request, size int) (first, last int, ok bool) {
	spec, found := strings.CutPrefix(r.Header.Get("Range"), "bytes=")
	if !found {
		return 0, size - 1, false
	}
	a, b, _ := strings.Cut(spec, "-")
	first, _ = strconv.Atoi(a)
	last = size - 1
	if b != "" {
		last, _ = strconv.Atoi(b)
	}
	return first, min(last, size-1), true
}

// partial writes a 206 for [first, last] with body, as told.
func partial(w http.ResponseWriter, first, last, size int, body []byte, length bool) {
	w.Header().Set("ETag", `"v1"`)
	w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, size))
	if length {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(http.StatusPartialContent)
	w.Write(body)
}

var hostiles = []hostile{
	{name: "ignores ranges", ok: true, handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data)
	}},
	{name: "ignores ranges after the first", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			serveRange(data, w, r)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Write(data)
	}},
	{name: "another range than asked", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		first, last, ok := requested(r, len(data))
		if !ok || n <= 2 {
			serveRange(data, w, r)
			return
		}
		partial(w, first+1, last, len(data), data[first+1:last+1], true)
	}},
	{name: "206 saying another total size", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		// The range asked, but of an object of another size.
		first, last, ok := requested(r, len(data))
		if !ok || n <= 2 {
			serveRange(data, w, r)
			return
		}
		partial(w, first, last, len(data)+1, data[first:last+1], true)
	}},
	{name: "chunked, right bytes", ok: true, handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		first, last, _ := requested(r, len(data))
		partial(w, first, last, len(data), data[first:last+1], false)
	}},
	{name: "body shorter than Content-Length", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		first, last, _ := requested(r, len(data))
		if n <= 2 {
			serveRange(data, w, r)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(data)))
		w.Header().Set("Content-Length", strconv.Itoa(last-first+1))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[first : first+(last-first)/2])
		panic(http.ErrAbortHandler)
	}},
	{name: "chunked, body short", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		first, last, _ := requested(r, len(data))
		if n <= 2 {
			serveRange(data, w, r)
			return
		}
		partial(w, first, last, len(data), data[first:first+(last-first)/2], false)
	}},
	{name: "chunked, body long", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		first, last, _ := requested(r, len(data))
		if n <= 2 {
			serveRange(data, w, r)
			return
		}
		partial(w, first, last, len(data), append(bytes.Clone(data[first:last+1]), 'x'), false)
	}},
	{name: "gzip Content-Encoding though identity asked", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		first, last, _ := requested(r, len(data))
		if n <= 2 {
			serveRange(data, w, r)
			return
		}
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		z.Write(data[first : last+1])
		z.Close()
		w.Header().Set("Content-Encoding", "gzip")
		partial(w, first, last, len(data), b.Bytes(), false)
	}},
	{name: "ETag changes mid-copy", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		if n > 2 {
			w.Header().Set("ETag", `"v2"`)
			data = bytes.Repeat([]byte{'z'}, len(data))
			http.ServeContent(w, r, "obj", time.Time{}, bytes.NewReader(data))
			return
		}
		serveRange(data, w, r)
	}},
	{name: "size changes mid-copy, no validator", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		if n > 2 {
			data = append(bytes.Clone(data), 'x')
		}
		http.ServeContent(w, r, "obj", time.Time{}, bytes.NewReader(data))
	}},
	{name: "404 after the first ranges", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		if n > 2 {
			http.NotFound(w, r)
			return
		}
		serveRange(data, w, r)
	}},
	{name: "416 after the first ranges", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		if n > 2 {
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		serveRange(data, w, r)
	}},
	{name: "no ranges, body cut, no validator", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:len(data)/2])
		panic(http.ErrAbortHandler)
	}},
	{name: "no ranges, body cut once, ETag", ok: true, handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		if n == 1 {
			w.Write(data[:len(data)/2])
			panic(http.ErrAbortHandler)
		}
		w.Write(data)
	}},
	{name: "no ranges, Content-Length longer than the object", handler: func(n int64, data []byte, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(data)+10))
		w.Write(data)
	}},
}

// TestHostileServers copies from each hostile server, over HTTP/1.1 and
// over HTTP/2 (TLS), raw and gzip-compressed objects: the outcome is the
// one the case names, and a failed copy leaves no DST.
func TestHostileServers(t *testing.T) {
	raw := randomBytes(3<<20+4097, 77)
	var packed bytes.Buffer
	z := gzip.NewWriter(&packed)
	z.Write(raw)
	z.Close()
	objects := map[string][]byte{"raw": raw, "gzip": packed.Bytes()}
	for _, h := range hostiles {
		for _, proto := range []string{"http1", "h2"} {
			for kind, data := range objects {
				t.Run(fmt.Sprintf("%s/%s/%s", h.name, proto, kind), func(t *testing.T) {
					var requests atomic.Int64
					ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						h.handler(requests.Add(1), data, w, r)
					}))
					web := copier.WebOptions{Retries: 2, StallTimeout: 5 * time.Second}
					if proto == "h2" {
						ts.EnableHTTP2 = true
						ts.StartTLS()
						web.CAFile = certFile(t, ts)
					} else {
						ts.Start()
					}
					defer ts.Close()
					dst := filepath.Join(t.TempDir(), "dst")
					_, err := copier.Copy(context.Background(), copier.Options{Src: ts.URL + "/obj", Dst: dst, Web: web, BlockSize: 256 << 10, QueueDepth: 4})
					switch {
					case h.ok && err != nil:
						t.Fatalf("%v", err)
					case h.ok:
						compareFile(t, dst, raw)
					case err == nil:
						got, _ := os.ReadFile(dst)
						t.Fatalf("copied with no error (%d bytes, equal to the object: %v)", len(got), bytes.Equal(got, raw))
					default:
						if _, serr := os.Lstat(dst); serr == nil {
							t.Fatalf("failed (%v) and left DST", err)
						}
						var refused *copier.RefusedError
						t.Logf("refused %v: %v", errors.As(err, &refused), err)
					}
				})
			}
		}
	}
}

// certFile writes ts's certificate as a CA file.
func certFile(t *testing.T, ts *httptest.Server) string {
	path := filepath.Join(t.TempDir(), "ca.pem")
	writeFile(t, path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
	return path
}
