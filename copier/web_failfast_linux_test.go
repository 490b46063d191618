package copier_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
)

// A copy whose one range failed for good ends at once, though the other
// ranges in flight stall: they cannot make it succeed. Before, each of
// them waited out the stall timeout and every retry, and a failed copy
// took minutes to say so.

// failFastLimit bounds how long the failed copy may take: far less than
// the stall timeout the stalled ranges would wait out (failFastStall),
// far more than failing takes on a loaded machine. A hang detector, not a
// speed assertion.
const (
	failFastLimit = 20 * time.Second
	failFastStall = 90 * time.Second
)

// failingRangeServer serves data with ranges: the range at bad fails as
// how says ("404", or "reset": headers then a reset, every time), the
// ranges between the first and bad stall mid-body until the test ends,
// the others are served.
func failingRangeServer(t *testing.T, data []byte, bad int64, how string) *httptest.Server {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first, last, ranged := requested(r, len(data))
		off := int64(first)
		switch {
		case !ranged || off == 0 || off > bad:
			serveRange(data, w, r)
		case off == bad && how == "404":
			http.NotFound(w, r)
		case off == bad:
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(data)))
			w.Header().Set("Content-Length", strconv.Itoa(last-first+1))
			w.WriteHeader(http.StatusPartialContent)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		default:
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(data)))
			w.Header().Set("Content-Length", strconv.Itoa(last-first+1))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[first : first+10])
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	t.Cleanup(func() {
		close(release)
		ts.Close()
	})
	return ts
}

// TestWebFailedRangeEndsCopy: one range 404s, or resets every time until
// its retries are spent, while the three before it stall: the copy fails
// within failFastLimit, naming the URL, the failed range's offset and the
// status, and leaves no DST.
func TestWebFailedRangeEndsCopy(t *testing.T) {
	data := randomBytes(4<<20+4097, 23)
	const bad = 1 << 20
	for _, how := range []string{"404", "reset"} {
		t.Run(how, func(t *testing.T) {
			ts := failingRangeServer(t, data, bad, how)
			dst := filepath.Join(t.TempDir(), "dst")
			web := copier.WebOptions{Retries: 2, StallTimeout: failFastStall, Connections: 4}
			start := time.Now()
			_, err := copier.Copy(context.Background(), copier.Options{Src: ts.URL + "/obj", Dst: dst, Web: web, BlockSize: 256 << 10, QueueDepth: 4})
			took := time.Since(start)
			if err == nil {
				t.Fatal("copied with no error")
			}
			t.Logf("after %v: %v", took.Round(time.Millisecond), err)
			if took > failFastLimit {
				t.Errorf("the copy took %v to fail: the stalled ranges were waited for", took.Round(time.Second))
			}
			want := []string{ts.URL + "/obj", "offset " + strconv.Itoa(bad)}
			if how == "404" {
				want = append(want, "404")
			} else {
				want = append(want, "retries exhausted")
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q", w)
				}
			}
			if strings.Contains(err.Error(), "context canceled") {
				t.Errorf("the error names the interruption of the stalled ranges")
			}
			if _, serr := os.Lstat(dst); serr == nil {
				t.Error("the failed copy left DST")
			}
		})
	}
}
