package qcow2

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResumeCutsPastNamed: a partial image grown past its end (a sparse
// 16 GiB of nothing, within Resume's bound on the file's length) is cut
// back by Resume to the last cluster its image names, and finishes clean,
// equal to SRC and as long as an image of its data. Before, Resume kept
// the length, counted every cluster of it in memory (a byte each: 2 GB
// for a 1 TiB image of 4 KiB clusters grown to 7 TiB), and the finished
// image stayed 16 GiB long.
func TestResumeCutsPastNamed(t *testing.T) {
	img := filepath.Join(t.TempDir(), "img.qcow2")
	_, opt := stoppedImage(t, img)
	src, err := os.ReadFile(img + ".src")
	if err != nil {
		t.Fatal(err)
	}
	start := fileSize(t, img)
	if err := os.Truncate(img, start+16<<30); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	from := int64(1 << 20)
	w, err := Resume(f, opt, from)
	if err != nil {
		t.Fatal(err)
	}
	if n := fileSize(t, img); n > start {
		t.Fatalf("after Resume the file is %d bytes long, the image it resumes ends by %d", n, start)
	}
	if _, err := w.WriteAt(src[from:], from); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fileSize(t, img); n > 4*int64(len(src)) {
		t.Fatalf("the finished image is %d bytes long for %d of data", n, len(src))
	}
	needQemu(t)
	qemuCheck(t, img)
	qemuCompare(t, img+".src", "raw", img, "qcow2")
}
