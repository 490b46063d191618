package copier_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/nbdtest"
)

// A dirty extent past the end of a DST smaller than SRC is refused before
// anything is written, as the same range in an extent list is: a
// restricted copy keeps DST's size. The copy went ahead, wrote the
// extent past DST's end and grew DST to SRC's size.
func TestDirtyBitmapPastDstEnd(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd", "qemu-img", "qemu-io")
	const size, g = 1<<20 + 512, 64 << 10
	dir := t.TempDir()
	img, dst := filepath.Join(dir, "disk.qcow2"), filepath.Join(dir, "backup.raw")
	nbdtest.QemuImg(t, "create", "-q", "-f", "qcow2", img, fmt.Sprint(size))
	qemuIO(t, img, fmt.Sprintf("write -P 0x11 0 %d", size))
	nbdtest.QemuImg(t, "convert", "-f", "qcow2", "-O", "raw", img, dst)
	if err := os.Truncate(dst, 1<<20); err != nil { // DST ends before SRC's last 512 bytes
		t.Fatal(err)
	}
	old, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	nbdtest.QemuImg(t, "bitmap", "--add", "--enable", "-g", fmt.Sprint(g), "-f", "qcow2", img, "b0")
	qemuIO(t, img, "write -P 0x22 0 1")                        // within DST
	qemuIO(t, img, fmt.Sprintf("write -P 0x33 %d 512", 1<<20)) // past DST's end
	srv := nbdtest.QemuNBD(t, nbdtest.Unix, "qcow2", img, "-r", "-B", "b0")

	o := copier.Options{Src: srv.URI, Dst: dst, DirtyBitmap: "b0"}
	p, err := copier.Prepare(o)
	if err == nil {
		_, err = p.Run(context.Background())
		t.Errorf("a dirty extent past DST's end was copied: %v", err)
	} else if !strings.Contains(err.Error(), "past the end of DST") {
		t.Errorf("refused, but not for the extent past DST's end: %v", err)
	}
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, old) {
		t.Fatalf("DST changed (%d bytes, was %d)", len(got), len(old))
	}
}
