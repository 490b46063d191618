package vmdk

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// file is an *os.File as a Transport.
type file struct{ *os.File }

func (f file) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func needQemuImg(t *testing.T) {
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skipf("qemu-img is not installed (Debian: qemu-utils): %v", err)
	}
}

func qemuImg(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("qemu-img", args...).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img %v: %v\n%s", args, err, out)
	}
}

// source is a raw disk of size bytes: random data, a run of zeros, a
// hole, text that compresses.
func source(t *testing.T, path string, size int64) {
	rng := rand.New(rand.NewSource(size))
	b := make([]byte, size)
	rng.Read(b)
	if size > 1<<20 {
		clear(b[200<<10 : 700<<10])
		copy(b[800<<10:], bytes.Repeat([]byte("vmdk grain "), 20000))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func openFile(t *testing.T, path string) *Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	im, err := Open(file{f})
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// TestRead: both kinds at awkward sizes and grain sizes read as
// qemu-img reads them, whole and in pieces from many goroutines, and
// what Data calls holes reads as zeros.
func TestRead(t *testing.T) {
	needQemuImg(t)
	for _, sub := range []string{"monolithicSparse", "streamOptimized"} {
		for _, size := range []int64{512, 64<<10 + 512, 3<<20 + 1536, 5 << 20} {
			t.Run(fmt.Sprintf("%s/%d", sub, size), func(t *testing.T) {
				dir := t.TempDir()
				src, img, ref := filepath.Join(dir, "src"), filepath.Join(dir, "img.vmdk"), filepath.Join(dir, "ref")
				source(t, src, size)
				qemuImg(t, "convert", "-f", "raw", "-O", "vmdk", "-o", "subformat="+sub, src, img)
				qemuImg(t, "convert", "-f", "vmdk", "-O", "raw", img, ref)
				want, _ := os.ReadFile(ref)
				im := openFile(t, img)
				if im.Size() != int64(len(want)) || im.Kind() != sub {
					t.Fatalf("size %d kind %s, qemu-img says %d %s", im.Size(), im.Kind(), len(want), sub)
				}
				got := make([]byte, len(want))
				if n, err := im.ReadAt(got, 0); n != len(want) || err != nil {
					t.Fatalf("ReadAt = %d, %v", n, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatal("the guest's bytes differ from qemu-img's")
				}
				pieces(t, im, want)
				holes(t, im, want)
			})
		}
	}
}

// pieces reads at odd offsets and lengths from goroutines at once.
func pieces(t *testing.T, im *Image, want []byte) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(i)))
			for range 20 {
				off := rng.Int63n(int64(len(want)))
				p := make([]byte, rng.Int63n(300<<10)+1)
				n, _ := im.ReadAt(p, off)
				if n != min(len(p), len(want)-int(off)) || !bytes.Equal(p[:n], want[off:off+int64(n)]) {
					t.Errorf("ReadAt(%d bytes at %d) = %d bytes, not the guest's", len(p), off, n)
				}
			}
		}()
	}
	wg.Wait()
}

// holes: everything Data does not call data reads as zeros.
func holes(t *testing.T, im *Image, want []byte) {
	size := int64(len(want))
	for off := int64(0); off < size; {
		start, stop, err := im.Data(off, size)
		if err != nil || start < off || stop < start || stop > size {
			t.Fatalf("Data(%d) = %d, %d, %v", off, start, stop, err)
		}
		if i := bytes.IndexFunc(want[off:start], func(r rune) bool { return r != 0 }); i >= 0 {
			t.Fatalf("byte %d is data, in what Data calls a hole", off+int64(i))
		}
		if start == stop {
			break
		}
		off = stop
	}
}

// TestRefusals: other vmdk kinds and damaged images are refused.
func TestRefusals(t *testing.T) {
	needQemuImg(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	source(t, src, 1<<20)
	flat := filepath.Join(dir, "flat.vmdk")
	qemuImg(t, "convert", "-f", "raw", "-O", "vmdk", "-o", "subformat=monolithicFlat", src, flat)
	sparse := filepath.Join(dir, "sparse.vmdk")
	qemuImg(t, "convert", "-f", "raw", "-O", "vmdk", src, sparse)
	b, _ := os.ReadFile(sparse)
	damaged := func(name string, at int, v byte) string {
		c := append([]byte(nil), b...)
		c[at] = v
		p := filepath.Join(dir, name)
		os.WriteFile(p, c, 0o644)
		return p
	}
	gd := int(le64(b[56:])) * 512
	for _, c := range []struct {
		path  string
		cause error
	}{
		{flat, ErrUnsupported},
		{src, ErrNotVMDK},
		{damaged("grain.vmdk", 20, 3), ErrMalformed},     // grain size not a power of two
		{damaged("unclean.vmdk", 72, 1), ErrUnsupported}, // unclean shutdown
		{damaged("gd.vmdk", gd+3, 0x7f), ErrMalformed},   // a grain table far past the end
		{damaged("version.vmdk", 4, 9), ErrUnsupported},
	} {
		f, err := os.Open(c.path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Open(file{f})
		f.Close()
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, c.cause) {
			t.Errorf("%s: got %v, want %v", filepath.Base(c.path), err, c.cause)
		}
	}
}

func le64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
