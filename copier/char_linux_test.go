package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/sys/unix"
)

// charSizes are the awkward lengths the character device ends are
// copied at.
var charSizes = []int64{0, 1, 511, 4097, 1<<20 + 3}

// TestZeroSrcToFile: /dev/zero with a length makes a new file of zeros
// (with holes by default, allocated with Sparse never, as dd's swap files
// need), and zeroes a range inside an existing file, keeping the rest;
// both engines, every awkward size.
func TestZeroSrcToFile(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		for _, sparse := range []copier.SparseMode{copier.SparseAuto, copier.SparseNever} {
			for _, n := range charSizes {
				t.Run(fmt.Sprintf("%s/%s/%d", eng, sparse, n), func(t *testing.T) {
					dir := t.TempDir()
					dst := filepath.Join(dir, "new")
					rep, err := copier.Copy(context.Background(), copier.Options{Src: "/dev/zero", Dst: dst,
						Length: n, LengthSet: true, Engine: eng, Sparse: sparse})
					if err != nil {
						t.Fatal(err)
					}
					if rep.Length != n || rep.DstState != copier.DstComplete {
						t.Fatalf("report %+v", rep)
					}
					compareFile(t, dst, make([]byte, n))
					if sparse == copier.SparseNever && n >= 4096 && allocated(t, dst) < n/4096*4096 {
						t.Fatalf("Sparse never: %s has %d bytes allocated, want all %d", dst, allocated(t, dst), n)
					}

					old := filepath.Join(dir, "old")
					data := randomBytes(n+8192, uint64(n))
					writeFile(t, old, data)
					if _, err := copier.Copy(context.Background(), copier.Options{Src: "/dev/zero", Dst: old,
						DstOffset: 4096, Length: n, LengthSet: true, Engine: eng, Sparse: sparse}); err != nil {
						t.Fatal(err)
					}
					copy(data[4096:4096+n], make([]byte, n))
					compareFile(t, old, data)
				})
			}
		}
	}
}

// TestEndlessSrcNeedsLength: /dev/zero and /dev/urandom to a file need
// the length; refused, nothing is created.
func TestEndlessSrcNeedsLength(t *testing.T) {
	for _, src := range []string{"/dev/zero", "/dev/urandom"} {
		dst := filepath.Join(t.TempDir(), "x")
		_, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: dst})
		var r *copier.RefusedError
		if !errors.As(err, &r) || r.Field != "Length" {
			t.Fatalf("%s: %v, want a refusal on Length", src, err)
		}
		if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: DST was created: %v", src, err)
		}
	}
}

// TestZeroWipesLoopDevice: /dev/zero without a length wipes a whole
// device (from DstOffset to its end, the bytes before kept), both
// engines, zeroed (Sparse auto) or written (never); read back.
func TestZeroWipesLoopDevice(t *testing.T) {
	blocktest.NeedTool(t, "losetup")
	uringtest.NeedOn(t)
	const size = 8<<20 + 4096
	for _, eng := range engines {
		for _, sparse := range []copier.SparseMode{copier.SparseAuto, copier.SparseNever} {
			t.Run(fmt.Sprintf("%s/%s", eng, sparse), func(t *testing.T) {
				dev, _ := blocktest.Device(t, size, "--direct-io=on")
				data := randomBytes(size, 7)
				writeFile(t, dev, data)
				rep, err := copier.Copy(context.Background(), copier.Options{Src: "/dev/zero", Dst: dev,
					DstOffset: 4096, Engine: eng, Sparse: sparse})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Length != size-4096 {
					t.Fatalf("length %d, want %d", rep.Length, size-4096)
				}
				copy(data[4096:], make([]byte, size-4096))
				compareDevicePrefix(t, dev, data)
			})
		}
	}
}

// TestRandomSrc: /dev/urandom gives the length asked, and two copies
// differ; /dev/random is the same device to a copy.
func TestRandomSrc(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		for _, n := range charSizes {
			t.Run(fmt.Sprintf("%s/%d", eng, n), func(t *testing.T) {
				dir := t.TempDir()
				a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
				for _, dst := range []string{a, b} {
					if _, err := copier.Copy(context.Background(), copier.Options{Src: "/dev/urandom", Dst: dst,
						Length: n, LengthSet: true, Engine: eng}); err != nil {
						t.Fatal(err)
					}
				}
				x, _ := os.ReadFile(a)
				y, _ := os.ReadFile(b)
				if int64(len(x)) != n || int64(len(y)) != n {
					t.Fatalf("sizes %d and %d, want %d", len(x), len(y), n)
				}
				if n >= 16 && bytes.Equal(x, y) {
					t.Fatalf("two copies of /dev/urandom are equal")
				}
				if n >= 4096 && bytes.Count(x, []byte{0}) > len(x)/2 {
					t.Fatalf("mostly zeros")
				}
			})
		}
	}
	if _, err := copier.Copy(context.Background(), copier.Options{Src: "/dev/random", Dst: filepath.Join(t.TempDir(), "r"),
		Length: 4097, LengthSet: true}); err != nil {
		t.Fatal(err)
	}
}

// TestNullDst: a read test reads every byte of SRC (a sparse file's
// holes too) through the engine, both engines, and writes nothing.
func TestNullDst(t *testing.T) {
	uringtest.NeedOn(t)
	for _, eng := range engines {
		for _, n := range charSizes {
			t.Run(fmt.Sprintf("%s/%d", eng, n), func(t *testing.T) {
				src := filepath.Join(t.TempDir(), "src")
				writeFile(t, src, randomBytes(n, 3))
				rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: "/dev/null", Engine: eng})
				if err != nil {
					t.Fatal(err)
				}
				if rep.BytesRead != n || rep.Length != n || rep.DstState != copier.DstComplete {
					t.Fatalf("report %+v", rep)
				}
			})
		}
		t.Run(string(eng)+"/sparse", func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "sparse")
			data := sparseLayout(t, rand.New(rand.NewPCG(5, 5)), src, 5)
			rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: "/dev/null", Engine: eng, Direct: copier.DirectAlways})
			if err != nil {
				t.Fatal(err)
			}
			if rep.BytesRead != int64(len(data)) || !rep.DirectSrc {
				t.Fatalf("read %d of %d bytes (direct %v)", rep.BytesRead, len(data), rep.DirectSrc)
			}
		})
	}
}

// TestCharRefusals: the memory devices that are no copy's end, and other
// character devices, are refused on the right side, before DST changes.
func TestCharRefusals(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	data := randomBytes(8192, 1)
	writeFile(t, file, data)
	cases := []struct{ src, dst, field string }{
		{"/dev/null", file, "Src"},
		{"/dev/full", file, "Src"},
		{file, "/dev/zero", "Dst"},
		{file, "/dev/full", "Dst"},
		{file, "/dev/random", "Dst"},
		{file, "/dev/urandom", "Dst"},
		{"/dev/ptmx", file, "Src"},
		{file, "/dev/ptmx", "Dst"},
		{"/dev/null", "/dev/null", "Src"},
		{"/dev/zero", "/dev/null", ""}, // accepted: a pointless, harmless read
	}
	for _, c := range cases {
		_, err := copier.Copy(context.Background(), copier.Options{Src: c.src, Dst: c.dst, Length: 4096, LengthSet: true})
		var r *copier.RefusedError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s -> %s: %v", c.src, c.dst, err)
		case c.field != "" && (!errors.As(err, &r) || r.Field != c.field):
			t.Errorf("%s -> %s: %v, want a refusal on %s", c.src, c.dst, err, c.field)
		}
		compareFile(t, file, data)
	}
}

// TestCharKnownByDevice: a symlink to /dev/zero, and (root) another
// node of the same device, are /dev/zero; a node of another memory
// device (/dev/mem's) is refused.
func TestCharKnownByDevice(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "zero-link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "out")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: link, Dst: dst, Length: 4097, LengthSet: true}); err != nil {
		t.Fatal(err)
	}
	compareFile(t, dst, make([]byte, 4097))
	if os.Geteuid() != 0 {
		t.Skip("mknod needs root")
	}
	node, mem := filepath.Join(dir, "myzero"), filepath.Join(dir, "mymem")
	if err := unix.Mknod(node, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
		t.Skipf("mknod: %v", err)
	}
	if err := unix.Mknod(mem, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 1))); err != nil {
		t.Fatal(err)
	}
	dst = filepath.Join(dir, "out2")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: node, Dst: dst, Length: 511, LengthSet: true}); err != nil {
		t.Fatal(err)
	}
	compareFile(t, dst, make([]byte, 511))
	_, err := copier.Copy(context.Background(), copier.Options{Src: mem, Dst: dst, Length: 511, LengthSet: true})
	var r *copier.RefusedError
	if !errors.As(err, &r) || r.Field != "Src" {
		t.Fatalf("/dev/mem's node: %v", err)
	}
}

// TestCharNoTrust: verification, checksums and resuming need an end
// that can be read again: refused.
func TestCharNoTrust(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, file, randomBytes(4096, 2))
	for _, o := range []copier.Options{
		{Src: "/dev/urandom", Dst: filepath.Join(dir, "v"), Length: 4096, LengthSet: true, Verify: true},
		{Src: "/dev/zero", Dst: filepath.Join(dir, "r"), Length: 4096, LengthSet: true, Resume: true},
		{Src: file, Dst: "/dev/null", Verify: true},
	} {
		_, err := copier.Copy(context.Background(), o)
		var r *copier.RefusedError
		if !errors.As(err, &r) {
			t.Errorf("%s -> %s: %v, want a refusal", o.Src, o.Dst, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "v")); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("a refused copy created DST: %v", err)
	}
}
