package copier_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// TestWebQcow2StopWhileStalled: a qcow2 image at a URL whose server
// stalls every range past its first MiB (its data) mid-body: the copy's
// context ending stops it within failFastLimit, a CanceledError, no DST.
// Before, the image's reads were not interrupted, and the copy waited
// out the stall timeout of each range in flight and its retries.
func TestWebQcow2StopWhileStalled(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	raw := filepath.Join(t.TempDir(), "src.raw")
	writeFile(t, raw, randomBytes(8<<20, 41))
	img := filepath.Join(t.TempDir(), "img.qcow2")
	qemu(t, "qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", raw, img)
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first, last, ranged := requested(r, len(data))
		if !ranged || first < 1<<20 {
			serveRange(data, w, r)
			return
		}
		partial(w, first, last, len(data), data[first:first+10], false)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	dst := filepath.Join(t.TempDir(), "dst")
	start := time.Now()
	_, err = copier.Copy(ctx, copier.Options{Src: ts.URL + "/img.qcow2", Dst: dst, BlockSize: 256 << 10, QueueDepth: 4,
		Web: copier.WebOptions{StallTimeout: failFastStall, Connections: 4}})
	took := time.Since(start)
	var canceled *copier.CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("after %v: %v; want a CanceledError", took, err)
	}
	if took > failFastLimit {
		t.Errorf("the stopped copy took %v: the image's reads were not interrupted", took.Round(time.Second))
	}
	mustNotExist(t, dst)
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
}
