package e2e

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// TestCDIImportMetricsPortTaken: the progress port taken (another
// container of the pod listens on it). CDI's importer serves its
// progress from a goroutine that gives up quietly, and imports; an
// import must not fail, and be retried for ever, for its progress
// display.
func TestCDIImportMetricsPortTaken(t *testing.T) {
	dir := t.TempDir()
	want := diskImage(t, filepath.Join(dir, "disk.raw"), 2<<20+4097, 33)
	s := webtest.Nginx(t, dir, webtest.Config{})
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dev, fill := filled(t, 4<<20)
	pod := podtest.New(t)
	pod.Block = dev
	r := startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw"), "--metrics-addr", taken.Addr().String())
	r.completed(t)
	deviceHolds(t, dev, want, fill[len(want):])
	if !strings.Contains(r.out.String(), taken.Addr().String()) {
		t.Errorf("the log does not say the progress endpoint could not listen:\n%s", r.out.String())
	}
}
