package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/qemutest"
	"golang.org/x/sys/unix"
)

// New qcow2 images made by copies: read back by qemu-img, checked by
// qemu-img check, compared by qemu-img compare.

// imageSizeOf is a size qemu-img gives the guest: rounded up to 512.
func imageSizeOf(n int64) int64 { return (n + 511) &^ 511 }

// TestQcow2Dst: raw SRCs of awkward sizes, with holes and zeros, made
// into images in each way: qemu-img check finds them clean, qemu-img
// reads back SRC (then zeros to the 512-byte boundary), zeros and holes
// are not stored, and the image is no larger than qemu-img's own.
func TestQcow2Dst(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	type way struct {
		name  string
		q     copier.Qcow2Options
		qemuO []string // qemu-img convert's options for the same image
	}
	ways := []way{
		{"plain", copier.Qcow2Options{}, nil},
		{"zstd", copier.Qcow2Options{Compress: "zstd"}, []string{"-c", "-o", "compression_type=zstd"}},
		{"zlib", copier.Qcow2Options{Compress: "zlib", ClusterSize: 4096}, []string{"-c", "-o", "cluster_size=4096"}},
		{"512 B clusters", copier.Qcow2Options{ClusterSize: 512}, []string{"-o", "cluster_size=512"}},
		{"preallocation metadata", copier.Qcow2Options{Preallocation: copier.PreallocMetadata}, []string{"-o", "preallocation=metadata"}},
	}
	for _, size := range []int64{0, 1, 511, 4097, 3<<20 + 5} {
		for _, w := range ways {
			t.Run(fmt.Sprintf("%d/%s", size, w.name), func(t *testing.T) {
				dir := t.TempDir()
				src := filepath.Join(dir, "src")
				b := randomBytes(size, uint64(size))
				if size > 2<<20 {
					clear(b[1<<20 : 2<<20]) // zeros
				}
				writeFile(t, src, b)
				if size > 2<<20 {
					punch(t, src, 64<<10, 256<<10) // a hole
					clear(b[64<<10 : 320<<10])
				}
				dst := filepath.Join(dir, "out.qcow2")
				if _, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, SrcFormat: copier.FormatRaw, DstFormat: copier.FormatQcow2, Qcow2: w.q, Verify: true}); err != nil {
					t.Fatal(err)
				}
				qemu(t, "qemu-img", "check", "-q", dst)
				back := qemuRaw(t, dst, dir)
				got, _ := os.ReadFile(back)
				want := append(b, make([]byte, imageSizeOf(size)-size)...)
				if !bytes.Equal(got, want) {
					t.Fatalf("qemu-img reads %d bytes that differ at %d from SRC's %d", len(got), firstDiff(got, want), len(want))
				}
				theirs := filepath.Join(dir, "qemu.qcow2")
				qemu(t, "qemu-img", append(append([]string{"convert", "-q", "-f", "raw", "-O", "qcow2"}, w.qemuO...), src, theirs)...)
				if g, q := fileLen(t, dst), fileLen(t, theirs); g > q {
					t.Errorf("the image is %d bytes long, qemu-img's %d", g, q)
				}
			})
		}
	}
}

// punch makes [off, off+n) of path a hole.
func punch(t testing.TB, path string, off, n int64) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n); err != nil {
		t.Fatal(err)
	}
}

// TestQcow2DstBacking: an image over a backing file stores only what
// differs: SRC is the backing file with a few changes, zeros over its
// data included; qemu-img reads SRC back through the chain.
func TestQcow2DstBacking(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	base := filepath.Join(dir, "base.raw")
	b := randomBytes(4<<20, 11)
	writeFile(t, base, b)
	src := filepath.Join(dir, "src")
	c := bytes.Clone(b)
	copy(c[1<<20:], randomBytes(100, 12))
	clear(c[2<<20 : 2<<20+128<<10])
	writeFile(t, src, c)
	dst := filepath.Join(dir, "over.qcow2")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst, DstFormat: copier.FormatQcow2, Qcow2: copier.Qcow2Options{Backing: "base.raw"}}); err != nil {
		t.Fatal(err)
	}
	qemu(t, "qemu-img", "check", "-q", dst)
	qemu(t, "qemu-img", "compare", "-q", "-f", "raw", "-F", "qcow2", src, dst)
	if n := fileLen(t, dst); n > 1<<20 {
		t.Errorf("the overlay is %d bytes: more than what differs", n)
	}
	info := qemu(t, "qemu-img", "info", dst)
	if !strings.Contains(info, "backing file: base.raw") || !strings.Contains(info, "backing file format: raw") {
		t.Errorf("qemu-img info:\n%s", info)
	}
}

// TestQcow2DstRefusals: what a qcow2 DST cannot be.
func TestQcow2DstRefusals(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, randomBytes(8192, 1))
	exists := filepath.Join(dir, "exists")
	writeFile(t, exists, []byte("keep"))
	for _, c := range []struct {
		name  string
		o     copier.Options
		field string
	}{
		{"existing DST", copier.Options{Dst: exists, DstFormat: copier.FormatQcow2}, "Dst"},
		{"resume at a cluster cut in two", copier.Options{DstFormat: copier.FormatQcow2, Resume: true, DstOffset: 4096}, "DstOffset"},
		{"cluster size", copier.Options{DstFormat: copier.FormatQcow2, Qcow2: copier.Qcow2Options{ClusterSize: 3000}}, "Qcow2.ClusterSize"},
		{"compression", copier.Options{DstFormat: copier.FormatQcow2, Qcow2: copier.Qcow2Options{Compress: "lz4"}}, "Qcow2.Compress"},
		{"prealloc with compression", copier.Options{DstFormat: copier.FormatQcow2, Qcow2: copier.Qcow2Options{Compress: "zstd", Preallocation: "metadata"}}, "Qcow2.Preallocation"},
		{"qcow2 options on raw", copier.Options{Qcow2: copier.Qcow2Options{Compress: "zstd"}}, "Qcow2.Compress"},
		{"missing backing", copier.Options{DstFormat: copier.FormatQcow2, Qcow2: copier.Qcow2Options{Backing: "nothing"}}, "Qcow2.Backing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.Src = src
			if c.o.Dst == "" {
				c.o.Dst = filepath.Join(dir, "new.qcow2")
			}
			_, err := copier.Copy(context.Background(), c.o)
			var refused *copier.RefusedError
			if !errors.As(err, &refused) || refused.Field != c.field {
				t.Fatalf("got %v, want a refusal on %s", err, c.field)
			}
			if _, err := os.Stat(filepath.Join(dir, "new.qcow2")); err == nil {
				t.Fatal("DST was made")
			}
		})
	}
	if b, _ := os.ReadFile(exists); string(b) != "keep" {
		t.Fatal("the existing DST changed")
	}
}

// TestQcow2ToQcow2: an image copied into a new compressed image reads as
// the first.
func TestQcow2ToQcow2(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	dir := t.TempDir()
	img := chain(t, dir)
	dst := filepath.Join(dir, "flat.qcow2")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: img, Dst: dst, SrcFormat: copier.FormatQcow2, DstFormat: copier.FormatQcow2, Qcow2: copier.Qcow2Options{Compress: "zstd"}, Verify: true}); err != nil {
		t.Fatal(err)
	}
	qemu(t, "qemu-img", "check", "-q", dst)
	qemu(t, "qemu-img", "compare", "-q", img, dst)
}
