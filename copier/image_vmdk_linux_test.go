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
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// vmdkImage converts a raw disk of size bytes (data, zeros, a hole) to a
// vmdk of the subformat.
func vmdkImage(t testing.TB, dir string, size int64, subformat string) string {
	src := holedSrc(t, dir, size)
	img := filepath.Join(dir, "img.vmdk")
	qemu(t, "qemu-img", "convert", "-q", "-f", "raw", "-O", "vmdk", "-o", "subformat="+subformat, src, img)
	return img
}

// TestVmdkSrc: both sparse kinds at awkward sizes, both backends, to a
// file: what qemu-img convert -O raw makes of them, holes included.
func TestVmdkSrc(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	for _, sub := range []string{"monolithicSparse", "streamOptimized"} {
		for _, size := range []int64{512, 4608, 3<<20 + 1536} {
			for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
				t.Run(fmt.Sprintf("%s/%d/%s", sub, size, eng), func(t *testing.T) {
					dir := t.TempDir()
					img := vmdkImage(t, dir, size, sub)
					want := qemuRaw(t, img, dir)
					dst := filepath.Join(dir, "out.raw")
					if _, err := copier.Copy(context.Background(), copier.Options{Src: img, Dst: dst, Engine: eng, Verify: true}); err != nil {
						t.Fatal(err)
					}
					sameImage(t, dst, want)
					if got, q := dataBytes(t, dst), dataBytes(t, want); got > q {
						t.Errorf("DST has %d bytes of data, qemu-img's copy %d", got, q)
					}
				})
			}
		}
	}
}

// TestVmdkSrcToQcow2AndLoop: a streamOptimized image (an OVA's disk)
// into a new qcow2 image and onto a loop device full of garbage.
func TestVmdkSrcToQcow2AndLoop(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	img := vmdkImage(t, dir, 3<<20+512, "streamOptimized")
	qc := filepath.Join(dir, "out.qcow2")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: img, Dst: qc, DstFormat: copier.FormatQcow2}); err != nil {
		t.Fatal(err)
	}
	qemu(t, "qemu-img", "check", "-q", qc)
	qemu(t, "qemu-img", "compare", "-q", "-f", "vmdk", "-F", "qcow2", img, qc)
	blocktest.NeedRoot(t)
	want, _ := os.ReadFile(qemuRaw(t, img, dir))
	for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
		dev, _ := blocktest.Device(t, 4<<20)
		writeFile(t, dev, bytes.Repeat([]byte{0xee}, 4<<20))
		if _, err := copier.Copy(context.Background(), copier.Options{Src: img, Dst: dev, Engine: eng, Length: int64(len(want)), LengthSet: true}); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(dev)
		if !bytes.Equal(got[:len(want)], want) {
			t.Fatalf("%s: the device differs at byte %d", eng, firstDiff(got, want))
		}
	}
}

// TestVmdkSrcRefusals: other vmdk kinds stay refused with the qemu-img
// line, and a damaged one is refused before any write.
func TestVmdkSrcRefusals(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	src := holedSrc(t, dir, 1<<20)
	flat := filepath.Join(dir, "flat.vmdk")
	qemu(t, "qemu-img", "convert", "-q", "-f", "raw", "-O", "vmdk", "-o", "subformat=monolithicFlat", src, flat)
	sparse := vmdkImage(t, t.TempDir(), 1<<20, "monolithicSparse")
	b, _ := os.ReadFile(sparse)
	b[72] = 1 // unclean shutdown
	unclean := filepath.Join(dir, "unclean.vmdk")
	writeFile(t, unclean, b)
	for _, c := range []struct {
		name string
		o    copier.Options
		kind copier.Kind
		want string
	}{
		{"descriptor", copier.Options{Src: flat}, copier.KindImageFormat, "qemu-img convert"},
		{"unclean", copier.Options{Src: unclean}, copier.KindImageFormat, "unclean shutdown"},
		{"raw as vmdk", copier.Options{Src: src, SrcFormat: copier.FormatVmdk}, copier.KindBadInput, "not a sparse vmdk image"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.Dst = filepath.Join(dir, "out")
			_, err := copier.Copy(context.Background(), c.o)
			var refused *copier.RefusedError
			if !errors.As(err, &refused) || refused.Kind != c.kind || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (%T), want a %s refusal with %q", err, err, c.kind, c.want)
			}
			if _, err := os.Stat(c.o.Dst); err == nil {
				t.Fatal("DST was made")
			}
		})
	}
}
