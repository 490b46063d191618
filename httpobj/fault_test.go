package httpobj

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// quick is Options for fault tests: short waits, so that retries take
// milliseconds.
func quick(t testing.TB) Options {
	var lines []string
	var mu sync.Mutex
	return Options{RetryWait: time.Millisecond, MaxWait: 20 * time.Millisecond, Retries: 3,
		StallTimeout: 5 * time.Second, Connections: 4, Logf: logTo(t, &lines, &mu)}
}

// TestResetMidBody: every range request is cut (RST) half way through
// its body, once; the reads retry the rest of each range and the bytes
// come out whole.
func TestResetMidBody(t *testing.T) {
	want := pattern(1<<20+511, 2)
	f := newFaultServer(t, want)
	var mu sync.Mutex
	cut := map[int64]bool{}
	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		first, last := rangeOf(r)
		mu.Lock()
		again := cut[first]
		cut[first] = true
		mu.Unlock()
		if n == 1 || again || last-first < 16 {
			return false
		}
		serve(&cutWriter{ResponseWriter: w, left: int(last-first) / 2}, r, want, `"v1"`, time.Time{}, false)
		return true
	})
	o := mustOpen(t, f.url(), quick(t))
	got, err := readParallel(o, 100_003, 4)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, want)
	if len(cut) < 10 {
		t.Fatalf("only %d ranges were cut", len(cut))
	}
}

// TestResetEveryTime: a range that is reset before any byte, every time,
// fails after Retries+1 attempts with ErrRetries, naming URL and offset.
func TestResetEveryTime(t *testing.T) {
	f := newFaultServer(t, pattern(8192, 3))
	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		if first, _ := rangeOf(r); first == 4096 {
			resetConn(w, false)
			return true
		}
		return false
	})
	o := mustOpen(t, f.url(), quick(t))
	p := make([]byte, 4096)
	if _, err := o.ReadAt(p, 0); err != nil {
		t.Fatal(err)
	}
	_, err := o.ReadAt(p, 4096)
	e := wantKind(t, err, ErrRetries)
	if e.Off != 4096 || e.Attempts != 4 || e.Op != "read" || e.URL != f.url() {
		t.Fatalf("error %+v, want read of %s at 4096 after 4 attempts", e, f.url())
	}
}

// Test503ThenSuccess: 503s at Open and on ranges are retried.
func Test503ThenSuccess(t *testing.T) {
	want := pattern(300_000, 4)
	f := newFaultServer(t, want)
	var mu sync.Mutex
	tries := map[int64]int{}
	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		first, _ := rangeOf(r)
		mu.Lock()
		tries[first]++
		again := tries[first]
		mu.Unlock()
		if again <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	o := mustOpen(t, f.url(), quick(t))
	got, err := readParallel(o, 65536, 2)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, want)
}

// Test429RetryAfter: Retry-After is waited (at least its second), and
// capped by MaxWait (an hour is not).
func Test429RetryAfter(t *testing.T) {
	for _, tc := range []struct {
		after   string
		maxWait time.Duration
		least   time.Duration
	}{{"1", 30 * time.Second, time.Second}, {"3600", 50 * time.Millisecond, 0},
		{time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), 50 * time.Millisecond, 0}} {
		t.Run(tc.after, func(t *testing.T) {
			want := pattern(5000, 5)
			f := newFaultServer(t, want)
			f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
				if n == 2 {
					w.Header().Set("Retry-After", tc.after)
					w.WriteHeader(http.StatusTooManyRequests)
					return true
				}
				return false
			})
			opts := quick(t)
			opts.MaxWait = tc.maxWait
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			o, err := Open(ctx, f.url(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			start := time.Now()
			got := make([]byte, len(want))
			if _, err := o.ReadAt(got, 0); err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(start); waited < tc.least {
				t.Fatalf("waited %v, Retry-After asked %v", waited, tc.least)
			}
			sameBytes(t, got, want)
		})
	}
}

// TestShortBody: a server that announces more bytes than it sends is
// retried, and fails with ErrRetries caused by ErrShortBody when it never
// sends them all; one that announces fewer than the range is a permanent
// ErrBadRange.
func TestShortBody(t *testing.T) {
	data := pattern(10000, 6)
	f := newFaultServer(t, data)
	short := func(n int, w http.ResponseWriter, r *http.Request) bool {
		first, last := rangeOf(r)
		if n == 1 {
			return false
		}
		w.Header().Set("Content-Range", "bytes "+strconv.FormatInt(first, 10)+"-"+strconv.FormatInt(last, 10)+"/10000")
		w.Header().Set("Content-Length", strconv.FormatInt(last-first+1, 10))
		w.Header().Set("ETag", `"v1"`)
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[first : first+(last-first)/2])
		return true
	}
	f.setFault(short)
	o := mustOpen(t, f.url(), quick(t))
	// Each request brings half of what is left: the read goes on while
	// bytes come, and fails once they stop coming.
	n, err := o.ReadAt(make([]byte, 4000), 1000)
	e := wantKind(t, err, ErrRetries)
	if !errors.Is(err, ErrShortBody) || e.Off != 1000+int64(n) || n < 3000 || n == 4000 {
		t.Fatalf("got %d bytes, %v; want a short body after most of the range came", n, err)
	}

	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		first, last := rangeOf(r)
		w.Header().Set("Content-Range", "bytes "+strconv.FormatInt(first, 10)+"-"+strconv.FormatInt(last, 10)+"/10000")
		w.Header().Set("Content-Length", strconv.FormatInt((last-first)/2, 10))
		w.Header().Set("ETag", `"v1"`)
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[first : first+(last-first)/2])
		return true
	})
	_, err = o.ReadAt(make([]byte, 4000), 1000)
	wantKind(t, err, ErrBadRange)
}

// TestStall: a server that stops sending for longer than StallTimeout has
// that request cut and retried.
func TestStall(t *testing.T) {
	want := pattern(200_000, 7)
	f := newFaultServer(t, want)
	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n != 2 {
			return false
		}
		first, last := rangeOf(r)
		w.Header().Set("Content-Range", "bytes "+strconv.FormatInt(first, 10)+"-"+strconv.FormatInt(last, 10)+"/200000")
		w.Header().Set("ETag", `"v1"`)
		w.WriteHeader(http.StatusPartialContent)
		w.Write(want[first : first+1000])
		http.NewResponseController(w).Flush()
		<-r.Context().Done() // until the client gives up on us
		return true
	})
	opts := quick(t)
	opts.StallTimeout = 300 * time.Millisecond
	o := mustOpen(t, f.url(), opts)
	got := make([]byte, len(want))
	if _, err := o.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, want)
	if f.count() != 3 {
		t.Fatalf("%d requests, want 3 (open, the stalled one, its retry)", f.count())
	}
}

// TestCancelStopsAll: cancelling Open's context ends every read in flight
// at once, even on a server that stalls forever.
func TestCancelStopsAll(t *testing.T) {
	f := newFaultServer(t, pattern(1<<20, 8))
	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 {
			return false
		}
		<-r.Context().Done()
		return true
	})
	ctx, cancel := context.WithCancel(context.Background())
	o, err := Open(ctx, f.url(), quick(t))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func(off int64) {
			_, err := o.ReadAt(make([]byte, 1000), off)
			errs <- err
		}(int64(i) * 1000)
	}
	time.Sleep(100 * time.Millisecond)
	cancel()
	for i := 0; i < 4; i++ {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("read %d: %v, want context.Canceled", i, err)
		}
	}
}

// TestPermanentAtOpen: 401, 403, 404, 410 are refusals of their kind at
// Open, at once (no retry); a 400 too.
func TestPermanentAtOpen(t *testing.T) {
	for status, kind := range map[int]error{401: ErrDenied, 403: ErrDenied, 404: ErrNotFound, 410: ErrNotFound, 400: ErrRefused} {
		f := newFaultServer(t, nil)
		f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
			w.WriteHeader(status)
			return true
		})
		_, err := Open(context.Background(), f.url(), quick(t))
		e := wantKind(t, err, kind)
		if e.Status != status || e.Op != "open" || f.count() != 1 {
			t.Fatalf("%d: %+v after %d requests, want a refusal at open after one", status, e, f.count())
		}
	}
}

// TestPermanentOnRead: a 404 in the middle of a copy is a failure of its
// kind, not retried.
func TestPermanentOnRead(t *testing.T) {
	f := newFaultServer(t, pattern(10000, 9))
	o := mustOpen(t, f.url(), quick(t))
	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusNotFound)
		return true
	})
	_, err := o.ReadAt(make([]byte, 100), 5000)
	if e := wantKind(t, err, ErrNotFound); e.Off != 5000 || e.Attempts != 1 {
		t.Fatalf("%+v, want offset 5000 after one attempt", e)
	}
}

// TestNoRanges: a server that ignores Range gives an object read as one
// stream (from Open's own answer: no second request); ReadAt says
// ErrNoRanges.
func TestNoRanges(t *testing.T) {
	for _, n := range sizes {
		want := pattern(n, 10)
		f := newFaultServer(t, want)
		f.noRanges = true
		o := mustOpen(t, f.url(), quick(t))
		if n > 0 && o.Ranges() {
			t.Fatalf("%d: Ranges() true from a server without ranges", n)
		}
		if n > 0 {
			_, err := o.ReadAt(make([]byte, 1), 0)
			wantKind(t, err, ErrNoRanges)
		}
		st := o.Stream()
		got, err := io.ReadAll(st)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, got, want)
		if f.count() != 1 {
			t.Fatalf("%d: %d requests, want 1", n, f.count())
		}
	}
}

// TestNoRangesResume: a stream without ranges cut in the middle is asked
// again whole, and what was read already is skipped; without a validator
// it cannot be, and fails.
func TestNoRangesResume(t *testing.T) {
	want := pattern(3<<20+5, 11)
	f := newFaultServer(t, want)
	f.noRanges = true
	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n > 2 {
			return false
		}
		serve(&cutWriter{ResponseWriter: w, left: n * 1 << 20}, r, want, `"v1"`, time.Time{}, true)
		return true
	})
	o := mustOpen(t, f.url(), quick(t))
	got, err := io.ReadAll(o.Stream())
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, want)

	f.change(want, "", time.Time{})
	f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		serve(&cutWriter{ResponseWriter: w, left: 1 << 20}, r, want, "", time.Time{}, true)
		return true
	})
	o = mustOpen(t, f.url(), quick(t))
	_, err = io.ReadAll(o.Stream())
	if !errors.Is(err, errNoValidator) {
		t.Fatalf("got %v, want a failure for want of a validator", err)
	}
}
