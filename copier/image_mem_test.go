package copier

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A qcow2 image is a format over any kind whose end reads at any offset:
// the mem kind says it can (readerAt, as an HTTP object's kind would),
// and an image in memory is then read as its guest's bytes, with nothing
// else of the mem kind changed.

func (m *memEnd) readerAt() (io.ReaderAt, int64, func(), error) {
	return m.buf, m.buf.size(), func() {}, nil
}

// TestQcow2OverMemKind: a compressed image with zero clusters, held in
// memory, copied to a file is what qemu-img convert -O raw makes of it.
func TestQcow2OverMemKind(t *testing.T) {
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skipf("qemu-img is not installed (Debian: qemu-utils): %v", err)
	}
	dir := t.TempDir()
	raw := filepath.Join(dir, "src.raw")
	b := bytes.Repeat([]byte("qcow2 over any end "), 200000)
	clear(b[1<<20 : 2<<20])
	if err := os.WriteFile(raw, b, 0o644); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "img.qcow2")
	if out, err := exec.Command("qemu-img", "convert", "-c", "-f", "raw", "-O", "qcow2", "-o", "compression_type=zstd", raw, img).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	image, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	src := memBuffer(t, "image", image)
	dst := filepath.Join(dir, "out")
	rep, err := Copy(context.Background(), Options{Src: src, Dst: dst, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	want := append(b, make([]byte, (int64(len(b))+511)&^511-int64(len(b)))...)
	if !bytes.Equal(got, want) {
		t.Fatalf("DST (%d bytes) is not the guest's bytes (%d)", len(got), len(want))
	}
	if rep.BytesHoles < 1<<20 {
		t.Errorf("%d bytes of holes: the zero clusters were read", rep.BytesHoles)
	}
	if _, err := Copy(context.Background(), Options{Src: src, Dst: filepath.Join(dir, "raw"), SrcFormat: FormatRaw}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "raw")); !bytes.Equal(got, image) {
		t.Error("SrcFormat raw did not copy the image's own bytes")
	}
}
