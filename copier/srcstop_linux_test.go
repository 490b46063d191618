package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"golang.org/x/sys/unix"
)

// cancelWithin is how long a cancelled copy may take to return: far less
// than the 30 s stall timeout (and the retries after it) that a read of a
// silent SRC waits, far more than stopping takes on a loaded machine.
const cancelWithin = 10 * time.Second

// copyUntilCancelled runs o, cancels it once it has written something (or
// after a while) and returns its error, failing the test if Copy does not
// return within cancelWithin of the cancel.
func copyUntilCancelled(t *testing.T, o copier.Options) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := copier.Copy(ctx, o)
		done <- err
	}()
	time.Sleep(time.Second) // the reads in flight now wait
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(cancelWithin):
		t.Fatalf("Copy still running %v after its context was cancelled", cancelWithin)
		return nil
	}
}

// wantCanceled fails the test unless err is the copy's CanceledError, and
// checks that the new DST was not left.
func wantCanceled(t *testing.T, err error, dst string) {
	t.Helper()
	var canceled *copier.CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("got %v, want a *CanceledError", err)
	}
	if _, serr := os.Lstat(dst); serr == nil {
		t.Fatal("a cancelled copy left its new DST")
	}
}

// TestCancelStalledServer: a copy from a server that stalls every range
// but the first returns at once when its context is cancelled.
func TestCancelStalledServer(t *testing.T) {
	data := randomBytes(8<<20, 91)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first, last, ok := requested(r, len(data)); ok && first > 0 {
			// Headers and a few bytes, then nothing, the connection open.
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(data)))
			w.Header().Set("Content-Length", fmt.Sprint(last-first+1))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[first : first+10])
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "obj", time.Time{}, bytes.NewReader(data))
	}))
	defer ts.Close()
	defer close(release)
	dst := filepath.Join(t.TempDir(), "dst")
	wantCanceled(t, copyUntilCancelled(t, copier.Options{Src: ts.URL + "/obj", Dst: dst, BlockSize: 1 << 20}), dst)
}

// TestCancelSilentFifo: a copy from a FIFO whose writer stays open and
// silent returns at once when its context is cancelled.
func TestCancelSilentFifo(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	opened := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			opened <- nil
			return
		}
		w.Write(bytes.Repeat([]byte("ringcp fifo\x00"), 100_000))
		opened <- w
	}()
	defer func() {
		if w := <-opened; w != nil {
			w.Close()
		}
	}()
	dst := filepath.Join(dir, "dst")
	wantCanceled(t, copyUntilCancelled(t, copier.Options{Src: fifo, Dst: dst}), dst)
}
