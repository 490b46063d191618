package qcow2

import (
	"bytes"
	stdflate "compress/flate"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// usrBinaries is up to n bytes of the machine's programs, the content of
// the deflate images ringcp is measured on.
func usrBinaries(t testing.TB, n int) []byte {
	t.Helper()
	var b []byte
	for _, dir := range []string{"/usr/bin", "/usr/lib/x86_64-linux-gnu"} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if len(b) >= n {
				return b[:n]
			}
			if p, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && e.Type().IsRegular() {
				b = append(b, p...)
			}
		}
	}
	return b
}

// TestInflateQemuClusters decompresses every cluster of zlib images made
// by qemu-img (programs, random data, text, zeros; clusters of 512 bytes
// to 2 MiB) with the inflater and with the standard library's reader, and
// wants the same bytes.
func TestInflateQemuClusters(t *testing.T) {
	needQemu(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.raw")
	sourceRaw(t, src, 12<<20, 7)
	f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(usrBinaries(t, 12<<20)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, cs := range []string{"512", "4096", "65536", "2M"} {
		t.Run(cs, func(t *testing.T) {
			img := filepath.Join(dir, cs+".qcow2")
			qemuImg(t, "convert", "-c", "-O", "qcow2", "-o", "compression_type=zlib,cluster_size="+cs, src, img)
			im := openPath(t, img, Options{})
			if n := compareClusters(t, im); n == 0 {
				t.Fatal("no compressed cluster")
			}
		})
	}
}

// compareClusters checks each compressed cluster of im and says how many
// there were.
func compareClusters(t *testing.T, im *Image) int {
	t.Helper()
	got, want := make([]byte, im.cs), make([]byte, im.cs)
	n := 0
	err := im.runs(0, im.size, func(r run) (bool, error) {
		if r.kind != runCompressed {
			return true, nil
		}
		coff, cn := im.compressedSpan(r.desc)
		src := make([]byte, min(coff+cn, im.fileSize)-coff)
		if err := readFull(im.t, src, coff); err != nil {
			return false, err
		}
		if _, err := io.ReadFull(stdflate.NewReader(bytes.NewReader(src)), want); err != nil {
			t.Fatalf("cluster at %#x: the standard library: %v", r.off, err)
		}
		if err := (inflater{}).decompress(got, src); err != nil {
			t.Fatalf("cluster at %#x: %v", r.off, err)
		}
		sameBytes(t, "cluster", got, want)
		n++
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
