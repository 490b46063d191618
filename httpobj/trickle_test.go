package httpobj

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// A server that gives almost nothing, forever: a byte now and then on an
// open connection (slowloris), or a byte and then a reset, every time.
// Each byte used to restart the stall timeout, and each attempt that
// moved one counted as progress and started the retries again, so that a
// read never ended. A request must move progressFloor bytes per stall
// timeout, and only an attempt that moved that much starts the count of
// retries again: the read fails, with ErrRetries, after a few attempts.

// trickle answers every request but Open's with the range's headers, then
// one byte every 20 ms (or one byte and a reset, with reset).
func trickle(want []byte, reset bool) func(n int, w http.ResponseWriter, r *http.Request) bool {
	return func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 {
			return false
		}
		first, last := rangeOf(r)
		if last < 0 {
			last = int64(len(want)) - 1
		}
		w.Header().Set("Content-Range", "bytes "+strconv.FormatInt(first, 10)+"-"+strconv.FormatInt(last, 10)+"/"+strconv.Itoa(len(want)))
		w.Header().Set("Content-Length", strconv.FormatInt(last-first+1, 10))
		w.Header().Set("ETag", `"v1"`)
		w.WriteHeader(http.StatusPartialContent)
		for i := first; i <= last; i++ {
			w.Write(want[i : i+1])
			http.NewResponseController(w).Flush()
			if reset {
				resetConn(w, true)
				return true
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-r.Context().Done():
				return true
			}
		}
		return true
	}
}

func TestTrickleFails(t *testing.T) {
	want := pattern(200_000, 29)
	reads := map[string]func(o *Object) error{
		"ReadAt": func(o *Object) error {
			_, err := o.ReadAt(make([]byte, len(want)), 0)
			return err
		},
		"Stream": func(o *Object) error {
			s := o.Stream()
			defer s.Close()
			_, err := io.ReadAll(s)
			return err
		},
	}
	for _, reset := range []bool{false, true} {
		for name, read := range reads {
			t.Run(name+map[bool]string{false: "/trickle", true: "/byte-then-reset"}[reset], func(t *testing.T) {
				f := newFaultServer(t, want)
				f.setFault(trickle(want, reset))
				opts := quick(t)
				opts.StallTimeout = 300 * time.Millisecond
				o := mustOpen(t, f.url(), opts)
				done := make(chan error, 1)
				go func() { done <- read(o) }()
				select {
				case err := <-done:
					wantKind(t, err, ErrRetries)
				case <-time.After(20 * time.Second):
					o.Close()
					t.Fatalf("still reading after 20 s (%d requests)", f.count())
				}
			})
		}
	}
}
