package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/podtest"
)

// TestCDIImportServerWithoutValidators: a server that sends neither ETag
// nor Last-Modified (a plain Go or Python file server) serves ranges and
// sizes; CDI's importer imports from it. ringcp must too, onto a
// filesystem volume and onto a block volume with scratch space (where
// both would keep a resume state, which cannot name such an object).
func TestCDIImportServerWithoutValidators(t *testing.T) {
	want := diskImage(t, filepath.Join(t.TempDir(), "disk.raw"), 3<<20+4097, 21)
	s := newFaultServer(t, want)
	s.etag = ""
	t.Run("filesystem", func(t *testing.T) {
		data := fsVolume(t, 32<<20)
		pod := podtest.New(t)
		pod.Data = data
		startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw")).completed(t)
		if got, _ := os.ReadFile(filepath.Join(data, "disk.img")); !bytes.Equal(got, want) {
			t.Fatalf("disk.img is not the image (first difference at %d)", firstDiff(got, want))
		}
	})
	t.Run("block", func(t *testing.T) {
		dev, fill := filled(t, 8<<20)
		pod := podtest.New(t)
		pod.Block, pod.Scratch = dev, t.TempDir()
		startImporter(t, pod, cdiEnv("http", s.URL+"/disk.raw")).completed(t)
		deviceHolds(t, dev, want, fill[len(want):])
	})
}
