package httpobj

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// An object whose only validator is a weak ETag cannot be pinned by a
// request (If-Match and If-Range take strong ones): each answer's ETag is
// all that tells it is the same object. One without validators at all
// has its size alone. These tests break exactly that.

// TestWeakETagEveryAnswer: Open sees a weak ETag and no Last-Modified;
// then the object changes (same size) and the server's answers carry no
// ETag. The read fails with ErrChanged and gives none of the new bytes;
// before, it returned them.
func TestWeakETagEveryAnswer(t *testing.T) {
	old, fresh := pattern(100_000, 21), pattern(100_000, 22)
	f := newFaultServer(t, old)
	f.change(old, `W/"v1"`, time.Time{})
	o := mustOpen(t, f.url(), quick(t))
	if !o.Pinned() {
		t.Fatal("an object with a weak ETag is not pinned")
	}
	p := make([]byte, 50_000)
	if _, err := o.ReadAt(p, 0); err != nil {
		t.Fatal(err)
	}
	f.change(fresh, "", time.Time{})
	clear(p)
	n, err := o.ReadAt(p, 50_000)
	wantKind(t, err, ErrChanged)
	if n != 0 {
		t.Fatalf("%d bytes of the new object returned with the error", n)
	}
	t.Log(err)
}

// TestUnpinnedAnswerWithoutSize: an object without ETag or Last-Modified
// is told from another by its size only; a 206 whose Content-Range does
// not say the size ("bytes a-b/*") cannot be checked and fails the read.
func TestUnpinnedAnswerWithoutSize(t *testing.T) {
	data := pattern(100_000, 23)
	f := newFaultServer(t, data)
	f.change(data, "", time.Time{})
	o := mustOpen(t, f.url(), quick(t))
	if o.Pinned() {
		t.Fatal("an object without validators is pinned")
	}
	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		first, last := rangeOf(r)
		if first < 0 || last < 0 {
			return false
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/*", first, last))
		w.Header().Set("Content-Length", strconv.FormatInt(last-first+1, 10))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[first : last+1])
		return true
	})
	p := make([]byte, 50_000)
	_, err := o.ReadAt(p, 50_000)
	wantKind(t, err, ErrChanged)
	t.Log(err)
}

// TestWeakETagWithLastModified: a weak ETag beside Last-Modified is
// pinned by Last-Modified (If-Range, If-Unmodified-Since); an answer
// without the ETag is taken, as before.
func TestWeakETagWithLastModified(t *testing.T) {
	data := pattern(100_000, 24)
	f := newFaultServer(t, data)
	f.change(data, `W/"v1"`, time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	o := mustOpen(t, f.url(), quick(t))
	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		w.Header().Del("ETag")
		serve(w, r, data, "", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), false)
		return true
	})
	p := make([]byte, 50_000)
	if _, err := o.ReadAt(p, 50_000); err != nil {
		t.Fatal(err)
	}
	sameBytes(t, p, data[50_000:])
}
