package e2e

import (
	bin "encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/podtest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// TestCDIImportCorruptImages: images that are not what they say: an xz,
// a gzip and a zstd image cut short, a gzip image with a byte changed in
// its data (its CRC then fails), a qcow2 image whose header says an L1
// table too small for its size (qemu-img: "L1 table is too small"). Each
// fails, with a message, never "Import Complete".
func TestCDIImportCorruptImages(t *testing.T) {
	for _, tool := range [][2]string{{"xz", "xz-utils"}, {"gzip", "gzip"}, {"zstd", "zstd"}} {
		webtest.Need(t, tool[0], tool[1])
	}
	dir := t.TempDir()
	raw := filepath.Join(dir, "disk.raw")
	diskImage(t, raw, 3<<20+4097, 61)
	for _, c := range [][]string{{"xz", "-k", "-T1", raw}, {"gzip", "-k", raw}, {"zstd", "-q", "-k", raw}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", c[0], err, out)
		}
	}
	for _, name := range []string{"disk.raw.xz", "disk.raw.gz", "disk.raw.zst"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cut-"+name), b[:len(b)*2/3], 0o644); err != nil {
			t.Fatal(err)
		}
		if name == "disk.raw.gz" {
			b[len(b)/2] ^= 0x40
			if err := os.WriteFile(filepath.Join(dir, "flipped-"+name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	qemuImg(t, "convert", "-f", "raw", "-O", "qcow2", "-o", "cluster_size=512", raw, filepath.Join(dir, "disk.qcow2"))
	q, err := os.ReadFile(filepath.Join(dir, "disk.qcow2"))
	if err != nil {
		t.Fatal(err)
	}
	bin.BigEndian.PutUint32(q[36:], 1) // l1_size: 32 KiB of a 3 MiB disk mapped
	if err := os.WriteFile(filepath.Join(dir, "short-l1.qcow2"), q, 0o644); err != nil {
		t.Fatal(err)
	}
	s := webtest.Nginx(t, dir, webtest.Config{})
	for _, name := range []string{"cut-disk.raw.xz", "cut-disk.raw.gz", "cut-disk.raw.zst", "flipped-disk.raw.gz", "short-l1.qcow2"} {
		t.Run(name, func(t *testing.T) {
			pod := podtest.New(t)
			pod.Data = fsVolume(t, 32<<20)
			failedImport(t, startImporter(t, pod, cdiEnv("http", s.URL+"/"+name)), time.Minute)
		})
	}
}
