package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/cmdtest"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// TestCopyIntoDirectory: a DST that is a directory (or a symlink to one)
// receives the copy under SRC's name, as cp does, and an existing file of
// that name is replaced; SRC's bytes land there, nothing beside.
func TestCopyIntoDirectory(t *testing.T) {
	for _, tail := range []string{"", "/", "link"} {
		fx := newFixture(t)
		dst := fx.Sub + tail
		if tail == "link" {
			dst = filepath.Join(fx.Dir, "dirlink")
			if err := os.Symlink(fx.Sub, dst); err != nil {
				t.Fatal(err)
			}
		}
		if tail == "/" {
			randomFile(t, filepath.Join(fx.Sub, "src"), 100_000, 9) // replaced
		}
		cli(t, "--progress", "none", fx.Src, dst).want(t, exitOK)
		into := filepath.Join(fx.Sub, "src")
		if digest(t, into) != digest(t, fx.Src) {
			t.Errorf("DST %q: %s is not SRC", dst, into)
		}
		if ents, _ := os.ReadDir(fx.Sub); len(ents) != 1 {
			t.Errorf("DST %q: the folder holds %d entries, want 1", dst, len(ents))
		}
	}
}

// TestDstImageRefused: an existing DST that is a disk image is refused
// before a byte is written, naming the format and the ways on; --dst-format
// raw and --force overwrite it; a range past its header is written; LUKS is
// a disk, not a container; --dst-format takes raw only.
func TestDstImageRefused(t *testing.T) {
	for _, kind := range []string{"qcow2", "vmdk", "vhdx", "vdi", "qed", "vpc-fixed"} {
		t.Run(kind, func(t *testing.T) {
			fx := newFixture(t)
			img := qemutest.DiskImage(t, fx.Dir, kind)
			snap := cmdtest.Snap(t, img)
			cli(t, fx.Src, img).want(t, exitRefused, "DST is a ", "disk image", "--dst-format raw", "qemu-img convert")
			snap.Same(t)
			for _, flag := range []string{"--dst-format=raw", "--force"} {
				cli(t, "--progress", "none", flag, fx.Src, img).want(t, exitOK)
				if digest(t, img) != digest(t, fx.Src) {
					t.Errorf("%s: DST is not SRC", flag)
				}
				os.Remove(img)
				img = qemutest.DiskImage(t, fx.Dir, kind)
			}
		})
	}
	fx := newFixture(t)
	img := qemutest.DiskImage(t, fx.Dir, "qcow2")
	cli(t, "--progress", "none", "--dst-offset", "64k", fx.Src, img).want(t, exitOK) // the header stays an image's
	luks := qemutest.DiskImage(t, fx.Dir, "luks")
	cli(t, "--progress", "none", fx.Src, luks).want(t, exitOK)
	cli(t, "--dst-format", "vmdk", fx.Src, fx.New).want(t, exitRefused, `unknown destination format "vmdk"`)
	fx.Unchanged(t)
}

// TestDDImageRefusalsSayTheWayOn: ringcp dd refuses an image SRC or DST
// as the copy does, naming its iformat= operand, or the plain command's
// flags where dd has no operand, not the library's fields.
func TestDDImageRefusalsSayTheWayOn(t *testing.T) {
	fx := newFixture(t)
	img := qemutest.DiskImage(t, fx.Dir, "qcow2")
	snap := cmdtest.Snap(t, img)
	cli(t, "dd", "if="+fx.Src, "of="+img).want(t, exitRefused, "DST is a qcow2 disk image", "(ringcp's --dst-format raw) or (ringcp's --force)")
	snap.Same(t)
	vhdx := qemutest.DiskImage(t, fx.Dir, "vhdx") // qcow2 and sparse vmdk are read as their guest sees them
	cli(t, "dd", "if="+vhdx, "of="+fx.New).want(t, exitRefused, "SRC is a vhdx disk image", "pass iformat=raw")
	fx.Unchanged(t)
	cli(t, "dd", "if="+vhdx, "of="+fx.New, "iformat=raw", "status=none").want(t, exitOK)
	if cmdtest.Digest(t, vhdx) != cmdtest.Digest(t, fx.New) {
		t.Error("dd iformat=raw: DST is not the vhdx file's bytes")
	}
}
