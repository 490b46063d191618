package copier_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// TestSrcLoopBackingClosed: a copy closes what it opened to watch its
// SRC. A loop device's backing file is kept open (O_PATH) from the open,
// so that a write after it is removed is still seen; where the loop
// device was the backing file of an image SRC's chain, that descriptor
// was left to the garbage collector, one per copy, in a program that
// copies many images.
func TestSrcLoopBackingClosed(t *testing.T) {
	blocktest.NeedRoot(t)
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	base, top := filepath.Join(dir, "base.raw"), filepath.Join(dir, "top.qcow2")
	data := randomBytes(4<<20, 71)
	writeFile(t, base, data)
	dev := blocktest.Loop(t, base)
	blocktest.Run(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", dev, "-F", "raw", top)
	for _, c := range []struct{ name, src string }{{"loop SRC", dev}, {"loop in an image's chain", top}} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out.raw")
			o := copier.Options{Src: c.src, Dst: dst, Engine: copier.EnginePool}
			if c.src == top {
				o.SrcFormat = copier.FormatQcow2
			}
			if _, err := copier.Copy(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("DST differs from SRC (%v)", err)
			}
			if fd := openOn(t, base); fd != "" {
				t.Errorf("the copy left %s open on the loop device's backing file %s", fd, base)
			}
		})
	}
}

// openOn is a descriptor of this process open on path, "" if none.
func openOn(t *testing.T, path string) string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if to, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && to == path {
			return "fd " + fd.Name()
		}
	}
	return ""
}
