package copier_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/qemutest"
	"github.com/ringcp/ringcp/internal/webtest"
)

// TestDamagedClusterNamed: a compressed cluster of a qcow2 (zstd), or a
// grain of a streamOptimized vmdk (deflate), that does not decompress
// fails the copy, and the error names it (a qcow2 cluster by its guest
// offset, a grain by its number and host offset), where it said only the
// engine's errno (EIO). Both engines. The damage is checked first: qemu-img
// convert must fail on it too.
func TestDamagedClusterNamed(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	for _, c := range damagedCases {
		t.Run(c.format, func(t *testing.T) {
			img := damagedImage(t, c.format, c.opts, c.magic)
			for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
				dst := filepath.Join(t.TempDir(), "out.raw")
				_, err := copier.Copy(context.Background(), copier.Options{Src: img, Dst: dst, Engine: eng})
				if err == nil {
					t.Fatalf("%s: a damaged compressed cluster copied without an error", eng)
				}
				if want := strings.ReplaceAll(c.want, "{img}", img); !strings.Contains(err.Error(), want) {
					t.Fatalf("%s: the error does not say the fifth cluster did not decompress (%q): %v", eng, want, err)
				}
				if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
					t.Errorf("%s: a failed copy left DST behind: %v", eng, serr)
				}
			}
		})
	}
}

// damagedCases are the images TestDamagedClusterNamed and
// TestDamagedClusterNamedReadPasses damage, and what their errors say.
var damagedCases = []struct {
	format, opts string
	magic        []byte // how each compressed cluster begins
	want         string // what the error says of the fifth, {img} its name
}{
	{"qcow2", "compression_type=zstd", []byte{0x28, 0xb5, 0x2f, 0xfd}, "decompress cluster {img} at offset 262144: "},
	{"vmdk", "subformat=streamOptimized", []byte{0x78, 0x9c}, "grain 4: inflate: "},
}

// damagedImage converts 2 MiB of text to a compressed image of format
// and damages its fifth compressed cluster (damageNth), checked by
// qemu-img convert failing on it.
func damagedImage(t *testing.T, format, opts string, magic []byte) string {
	t.Helper()
	return damagedImageOf(t, format, opts, magic, 2<<20, 5)
}

// damagedImageOf converts size bytes of text to a compressed image of
// format and damages its nth compressed cluster.
func damagedImageOf(t *testing.T, format, opts string, magic []byte, size, nth int) string {
	t.Helper()
	dir := t.TempDir()
	var text strings.Builder
	for i := 0; text.Len() < size; i++ {
		fmt.Fprintf(&text, "line %d of an image with a damaged cluster\n", i)
	}
	raw := filepath.Join(dir, "src.raw")
	writeFile(t, raw, []byte(text.String()[:size]))
	img := filepath.Join(dir, "img."+format)
	args := []string{"convert", "-q", "-f", "raw", "-O", format, "-o", opts, raw, img}
	if format == "qcow2" {
		args = append(args[:1], append([]string{"-c"}, args[1:]...)...)
	}
	qemu(t, "qemu-img", args...)
	damageNth(t, img, magic, nth)
	if out, err := exec.Command("qemu-img", "convert", "-f", format, "-O", "raw", img, filepath.Join(dir, "qemu.raw")).CombinedOutput(); err == nil {
		t.Fatalf("qemu-img converts the damaged image: the damage missed the data\n%s", out)
	}
	return img
}

// TestDamagedClusterNamedReadPasses: ringcp checksum and ringcp verify
// (Checksum, Compare) of an image with a damaged compressed cluster name
// it as the copy does, where they said only EIO at the request's offset;
// on either side of a compare. Both engines.
func TestDamagedClusterNamedReadPasses(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	for _, c := range damagedCases {
		t.Run(c.format, func(t *testing.T) {
			img := damagedImage(t, c.format, c.opts, c.magic)
			want := strings.ReplaceAll(c.want, "{img}", img)
			raw := filepath.Join(t.TempDir(), "same.raw")
			writeFile(t, raw, make([]byte, 2<<20))
			for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
				for _, pass := range []struct {
					name string
					run  func() error
				}{
					{"checksum", func() error {
						_, err := copier.Checksum(context.Background(), copier.ReadOptions{Src: img, Engine: eng})
						return err
					}},
					{"compare SRC", func() error {
						_, err := copier.Compare(context.Background(), copier.ReadOptions{Src: img, Dst: raw, Engine: eng})
						return err
					}},
					{"compare DST", func() error {
						_, err := copier.Compare(context.Background(), copier.ReadOptions{Src: raw, Dst: img, Engine: eng})
						return err
					}},
				} {
					err := pass.run()
					if err == nil {
						t.Fatalf("%s %s: a damaged compressed cluster read without an error", pass.name, eng)
					}
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s %s: the error does not say the fifth cluster did not decompress (%q): %v", pass.name, eng, want, err)
					}
				}
			}
		})
	}
}

// damageNth overwrites the start of the image's nth compressed cluster,
// found by how one begins (qemu-img convert writes them in guest order,
// one a cluster of 64 KiB): the fifth, the cluster at 256 KiB, cannot
// decompress. (Bytes damaged inside a zstd frame may decode to other
// bytes: QEMU's frames carry no checksum.)
func damageNth(t *testing.T, img string, magic []byte, nth int) {
	t.Helper()
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	at := -1
	for range nth {
		next := bytes.Index(b[at+1:], magic)
		if next < 0 {
			t.Fatalf("fewer than %d compressed clusters in the image", nth)
		}
		at += 1 + next
	}
	copy(b[at:], "junk"[:len(magic)])
	writeFile(t, img, b)
}

// TestWebDamagedClusterNamed: a damaged image on a web server fails the
// copy naming its cluster, as a local one does, with many requests in
// flight: the copy's failure interrupts the server's reads still in
// flight, and that interruption, the server end's first error, is no
// cause, but it hid the qcow2's (the pool said only EIO). A qcow2 and a
// streamOptimized vmdk, both engines, and ringcp checksum.
func TestWebDamagedClusterNamed(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	for _, c := range damagedCases {
		// 32 MiB, the cluster at 24 MiB damaged: the copy reads from
		// the server on many connections when it fails.
		img := damagedImageOf(t, c.format, c.opts, c.magic, 32<<20, 385)
		s := webtest.Nginx(t, filepath.Dir(img), webtest.Config{})
		url := s.URL + "/" + filepath.Base(img)
		want := "decompress cluster " + url + " at offset 25165824: "
		if c.format == "vmdk" {
			want = "grain 384: inflate: "
		}
		for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
			for _, bs := range []int{0, 64 << 10} {
				dst := filepath.Join(t.TempDir(), "out.raw")
				_, err := copier.Copy(context.Background(), copier.Options{Src: url, Dst: dst, Engine: eng, BlockSize: bs, QueueDepth: 8})
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s, block size %d: the error does not say the damaged cluster did not decompress (%q): %v", eng, bs, want, err)
				}
			}
			_, err := copier.Checksum(context.Background(), copier.ReadOptions{Src: url, Engine: eng, BlockSize: 64 << 10, QueueDepth: 8})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("checksum %s: the error does not say the damaged cluster did not decompress (%q): %v", eng, want, err)
			}
		}
	}
}
