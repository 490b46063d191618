package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A stop signal stops a copy whose SRC gives nothing: a server that
// stalls mid-body or asks to wait (429 with a long Retry-After), standard
// input whose writer neither writes nor closes. The copy must not wait
// for that SRC (up to the stall timeout and every retry and backoff, or
// forever) before it stops: it exits 128+signal within a few seconds,
// having said what DST holds.

// stopLimit bounds how long a stopped copy may take to exit: far less
// than the 30 s stall timeout and MaxWait the reads would otherwise wait
// out, far more than stopping takes on a loaded machine.
const stopLimit = 15 * time.Second

// stallingServer serves data with ranges, but answers any range that
// starts at or past from badly: hold stalls mid-body (headers and a few
// bytes, then nothing, the connection open), or a 429 that asks to wait
// an hour. Held requests end when the test does.
func stallingServer(t *testing.T, data []byte, from int64, how string) *httptest.Server {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if off, last := rangeOf(r.Header.Get("Range"), int64(len(data))); off >= from {
			switch how {
			case "stall":
				w.Header().Set("ETag", `"v1"`)
				w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, last, len(data)))
				w.Header().Set("Content-Length", strconv.FormatInt(last-off+1, 10))
				w.WriteHeader(http.StatusPartialContent)
				w.Write(data[off : off+10])
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				}
			case "429":
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(http.StatusTooManyRequests)
			}
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "obj", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(func() {
		close(release)
		ts.Close()
	})
	return ts
}

// rangeOf is the range "bytes=A-B" asks of an object of size bytes: 0
// and size-1 without a Range.
func rangeOf(h string, size int64) (first, last int64) {
	spec, ok := strings.CutPrefix(h, "bytes=")
	if !ok {
		return 0, size - 1
	}
	a, b, _ := strings.Cut(spec, "-")
	first, _ = strconv.ParseInt(a, 10, 64)
	last = size - 1
	if b != "" {
		last, _ = strconv.ParseInt(b, 10, 64)
	}
	return first, min(last, size-1)
}

// TestStopWhileURLStalls: SIGINT while every range in flight stalls, or
// waits for a Retry-After, stops the copy at once.
func TestStopWhileURLStalls(t *testing.T) {
	data := bytes.Repeat([]byte("ringcp stall!\x00\x01\x02"), 4<<20/16)
	for _, how := range []string{"stall", "429"} {
		t.Run(how, func(t *testing.T) {
			ts := stallingServer(t, data, 1<<20, how)
			dst := filepath.Join(t.TempDir(), "dst")
			p := startMoving(t, []string{binary(t), "-b", "64k", "-q", "2", "--progress", "always", ts.URL + "/obj", dst})
			time.Sleep(500 * time.Millisecond) // every read in flight now waits
			p.signal(t, syscall.SIGINT)
			r := p.waitUpTo(t, stopLimit)
			r.want(t, 128+int(syscall.SIGINT), "interrupted by SIGINT")
			mustNotExist(t, dst)
		})
	}
}

// TestStopWhileStdinIsSilent: SIGTERM while standard input (a pipe whose
// writer stays open) gives nothing stops the copy at once.
func TestStopWhileStdinIsSilent(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	go w.Write(bytes.Repeat([]byte("ringcp stdin\x00\x00\x00\x00"), 1<<20/16))
	dst := filepath.Join(t.TempDir(), "dst")
	cmd := exec.Command(binary(t), "-b", "64k", "--progress", "always", "-", dst)
	cmd.Stdin = r
	p := startCmd(t, cmd, nil)
	r.Close()
	p.waitFor(t, progressMoved)
	time.Sleep(500 * time.Millisecond)
	p.signal(t, syscall.SIGTERM)
	res := p.waitUpTo(t, stopLimit)
	res.want(t, 128+int(syscall.SIGTERM), "interrupted by SIGTERM")
	mustNotExist(t, dst)
}
