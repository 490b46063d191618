package copier_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
	"golang.org/x/sys/unix"
)

// qemu runs a QEMU tool that must succeed.
func qemu(t testing.TB, tool string, args ...string) string {
	t.Helper()
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// qemuIO writes into img with qemu-io commands ("write -P 7 0 64k").
func qemuIO(t testing.TB, img string, cmds ...string) {
	t.Helper()
	args := []string{"-f", "qcow2"}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	qemu(t, "qemu-io", append(args, img)...)
}

// imageShape makes one image in dir and returns its path.
type imageShape struct {
	name string
	make func(t testing.TB, dir string) string
}

// plainImage is an image of size with create options, written by cmds.
func plainImage(size string, opts string, cmds ...string) func(testing.TB, string) string {
	return func(t testing.TB, dir string) string {
		img := filepath.Join(dir, "img.qcow2")
		args := []string{"create", "-q", "-f", "qcow2"}
		if opts != "" {
			args = append(args, "-o", opts)
		}
		qemu(t, "qemu-img", append(args, img, size)...)
		if len(cmds) > 0 {
			qemuIO(t, img, cmds...)
		}
		return img
	}
}

// mixed writes data, zeros over data (write -z), a discard and an odd
// tail.
var mixed = []string{"write -P 0x11 0 192k", "write -z 64k 64k", "write -P 0x22 1m 100k", "discard 1m 64k", "write -P 0x33 3m 4k"}

// compressed is an image of random-looking and repeated data converted
// with -c and the compression type.
func compressed(ctype string) func(testing.TB, string) string {
	return func(t testing.TB, dir string) string {
		raw := filepath.Join(dir, "src.raw")
		b := randomBytes(3<<20, 9)
		copy(b[1<<20:], bytes.Repeat([]byte("ringcp qcow2 "), 80000))
		clear(b[2<<20 : 2<<20+300<<10])
		writeFile(t, raw, b)
		img := filepath.Join(dir, "img.qcow2")
		qemu(t, "qemu-img", "convert", "-q", "-c", "-f", "raw", "-O", "qcow2", "-o", "compression_type="+ctype, raw, img)
		return img
	}
}

// chain is three deep: a raw base shorter than the overlays, a qcow2
// over it (absolute name), a qcow2 over that (relative name).
func chain(t testing.TB, dir string) string {
	base := filepath.Join(dir, "base.raw")
	writeFile(t, base, randomBytes(1<<20+512, 5))
	mid := filepath.Join(dir, "mid.qcow2")
	qemu(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", base, "-F", "raw", mid, "3m")
	qemuIO(t, mid, "write -P 0x44 512k 128k", "write -z 0 64k", "write -P 0x45 2m 4k")
	top := filepath.Join(dir, "top.qcow2")
	qemu(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", "mid.qcow2", "-F", "qcow2", top, "4m")
	qemuIO(t, top, "write -P 0x46 600k 10k", "write -z 2m 64k", "write -P 0x47 3146240 1k")
	return top
}

var imageShapes = []imageShape{
	{"empty", plainImage("0", "")},
	{"512", plainImage("512", "", "write -P 1 0 512")},
	{"mixed", plainImage("4m", "", mixed...)},
	{"compat 0.10, 512 B clusters", plainImage("4m", "compat=0.10,cluster_size=512", mixed...)},
	{"2 MiB clusters, extended L2", plainImage("5m", "cluster_size=2M,extended_l2=on", mixed...)},
	{"64 KiB extended L2 subclusters", plainImage("4m", "extended_l2=on", "write -P 9 2k 2k", "write -P 8 70k 1k", "write -z 0 1k")},
	{"zlib", compressed("zlib")},
	{"zstd", compressed("zstd")},
	{"chain of three", chain},
}

// dataBytes is the bytes of path's data extents (SEEK_DATA, SEEK_HOLE):
// the filesystem's own metadata blocks do not count.
func dataBytes(t testing.TB, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	for off := int64(0); ; {
		start, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
		if err != nil {
			return n // ENXIO: no data past off
		}
		stop, err := unix.Seek(int(f.Fd()), start, unix.SEEK_HOLE)
		if err != nil {
			t.Fatal(err)
		}
		n, off = n+stop-start, stop
	}
}

// qemuRaw is img as qemu-img convert -O raw makes it.
func qemuRaw(t testing.TB, img, dir string) string {
	out := filepath.Join(dir, "qemu.raw")
	qemu(t, "qemu-img", "convert", "-q", "-O", "raw", img, out)
	return out
}

// sameImage compares two files byte for byte.
func sameImage(t testing.TB, got, want string) {
	t.Helper()
	g, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Fatalf("%s (%d bytes) differs from %s (%d bytes) at byte %d", got, len(g), want, len(w), firstDiff(g, w))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestQcow2Src: each shape of image copied to a file by both backends is
// what qemu-img convert -O raw makes of it, and takes no more room.
func TestQcow2Src(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	for _, s := range imageShapes {
		for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
			t.Run(s.name+"/"+string(eng), func(t *testing.T) {
				dir := t.TempDir()
				img := s.make(t, dir)
				want := qemuRaw(t, img, dir)
				dst := filepath.Join(dir, "out.raw")
				rep, err := copier.Copy(context.Background(), copier.Options{Src: img, Dst: dst, Engine: eng, Verify: true})
				if err != nil {
					t.Fatal(err)
				}
				sameImage(t, dst, want)
				if got, q := dataBytes(t, dst), dataBytes(t, want); got > q {
					t.Errorf("DST has %d bytes of data, qemu-img's copy %d", got, q)
				}
				if rep.Length != fileLen(t, want) {
					t.Errorf("report says %d bytes, the guest has %d", rep.Length, fileLen(t, want))
				}
			})
		}
	}
}

func fileLen(t testing.TB, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestQcow2SrcRange: a range of a qcow2 SRC is a range of its guest's
// bytes, onto an offset of an existing DST.
func TestQcow2SrcRange(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	dir := t.TempDir()
	img := plainImage("4m", "", mixed...)(t, dir)
	want, err := os.ReadFile(qemuRaw(t, img, dir))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "dst")
	old := randomBytes(2<<20, 6)
	writeFile(t, dst, old)
	const off, n, at = 100<<10 + 7, 1<<20 + 3, 4097
	if _, err := copier.Copy(context.Background(), copier.Options{Src: img, Dst: dst, SrcOffset: off, DstOffset: at, Length: n, LengthSet: true}); err != nil {
		t.Fatal(err)
	}
	copy(old[at:], want[off:off+n])
	got, _ := os.ReadFile(dst)
	if !bytes.Equal(got, old) {
		t.Fatalf("DST differs at byte %d", firstDiff(got, old))
	}
}

// TestQcow2SrcLoop: an image onto a loop device, both backends: the
// device reads as qemu-img's conversion, holes included.
func TestQcow2SrcLoop(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	blocktest.NeedRoot(t)
	for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
		t.Run(string(eng), func(t *testing.T) {
			dir := t.TempDir()
			img := chain(t, dir)
			want, _ := os.ReadFile(qemuRaw(t, img, dir))
			dev, _ := blocktest.Device(t, 4<<20)
			// The device starts as garbage: the image's holes must be
			// made zeros on it.
			writeFile(t, dev, bytes.Repeat([]byte{0xee}, 4<<20))
			if _, err := copier.Copy(context.Background(), copier.Options{Src: img, Dst: dev, Engine: eng}); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(dev)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("device differs at byte %d", firstDiff(got, want))
			}
		})
	}
}

// TestQcow2OnDevice: an image on a block device (as on an LV) is read
// as its guest sees it, to a file and into a new image.
func TestQcow2OnDevice(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	blocktest.NeedRoot(t)
	dir := t.TempDir()
	img := compressed("zstd")(t, dir)
	want := qemuRaw(t, img, dir)
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	dev, _ := blocktest.Device(t, int64(len(b)+1<<20)&^(1<<20-1))
	writeFile(t, dev, b)
	for _, eng := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
		dst := filepath.Join(t.TempDir(), "out.raw")
		if _, err := copier.Copy(context.Background(), copier.Options{Src: dev, Dst: dst, Engine: eng, Verify: true}); err != nil {
			t.Fatal(err)
		}
		sameImage(t, dst, want)
	}
	again := filepath.Join(dir, "again.qcow2")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: dev, Dst: again, DstFormat: copier.FormatQcow2}); err != nil {
		t.Fatal(err)
	}
	qemu(t, "qemu-img", "compare", "-q", "-f", "raw", "-F", "qcow2", want, again)
}

// TestQcow2SrcRefusals: a damaged or encrypted image, --src-format qcow2
// on a raw file, and a DST in SRC's chain are refused before any write.
func TestQcow2SrcRefusals(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	dir := t.TempDir()
	top := chain(t, dir)
	enc := filepath.Join(dir, "enc.qcow2")
	qemu(t, "qemu-img", "create", "-q", "-f", "qcow2", "--object", "secret,id=s,data=pw", "-o", "encrypt.format=luks,encrypt.key-secret=s", enc, "1m")
	dirty := filepath.Join(dir, "dirty.qcow2")
	plain := plainImage("1m", "", "write -P 1 0 64k")(t, dir)
	b, _ := os.ReadFile(plain)
	b[79] |= 1 // incompatible features: dirty
	writeFile(t, dirty, b)
	raw := filepath.Join(dir, "raw")
	writeFile(t, raw, randomBytes(4096, 1))
	for _, c := range []struct {
		name string
		o    copier.Options
		kind copier.Kind
		want string
	}{
		{"encrypted", copier.Options{Src: enc}, copier.KindImageFormat, "encrypt"},
		{"dirty", copier.Options{Src: dirty}, copier.KindImageFormat, "dirty"},
		{"not qcow2", copier.Options{Src: raw, SrcFormat: copier.FormatQcow2}, copier.KindBadInput, "not a qcow2 image"},
		{"DST is the backing file", copier.Options{Src: top, Dst: filepath.Join(dir, "base.raw")}, copier.KindOverlap, "backing chain"},
		{"DST is the image", copier.Options{Src: top, Dst: top}, copier.KindOverlap, ""},
		{"unknown format", copier.Options{Src: raw, SrcFormat: "vmdk"}, copier.KindBadInput, "unknown source format"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.o.Dst == "" {
				c.o.Dst = filepath.Join(dir, "out")
			}
			before, _ := os.ReadFile(c.o.Dst)
			_, err := copier.Copy(context.Background(), c.o)
			var refused *copier.RefusedError
			if !errors.As(err, &refused) || refused.Kind != c.kind || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (%T), want a %s refusal with %q", err, err, c.kind, c.want)
			}
			after, _ := os.ReadFile(c.o.Dst)
			if !bytes.Equal(before, after) {
				t.Fatal("DST changed")
			}
		})
	}
}

// TestQcow2SrcRaw: --src-format raw copies the image file as it is.
func TestQcow2SrcRaw(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io")
	dir := t.TempDir()
	img := plainImage("1m", "", "write -P 3 0 4k")(t, dir)
	dst := filepath.Join(dir, "copy")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: img, Dst: dst, SrcFormat: copier.FormatRaw}); err != nil {
		t.Fatal(err)
	}
	sameImage(t, dst, img)
}
