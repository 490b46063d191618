package faultfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/ring"
	"golang.org/x/sys/unix"
)

var sizes = []int{0, 1, 511, 4096, 4097, 1<<20 + 3}

// TestRoundTrip writes files through the mount and reads them back through
// it, buffered, with O_DIRECT and with io_uring, byte for byte.
func TestRoundTrip(t *testing.T) {
	back := t.TempDir()
	seed := pattern(1<<20 + 3)
	writeBacking(t, back, "seed", seed)
	fs := mountT(t, back)

	if got, err := os.ReadFile(fs.Path("seed")); err != nil || !bytes.Equal(got, seed) {
		t.Fatalf("read a file that was there before the mount: %d bytes, %v", len(got), err)
	}
	for _, size := range sizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			name := fmt.Sprintf("f%d", size)
			data := pattern(size)
			if err := os.WriteFile(fs.Path(name), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(fs.Path(name)); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("buffered read back: %d bytes, %v", len(got), err)
			}
			if got, err := os.ReadFile(filepath.Join(back, name)); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("backing file: %d bytes, %v", len(got), err)
			}
			if st, err := os.Stat(fs.Path(name)); err != nil || st.Size() != int64(size) {
				t.Fatalf("stat through the mount: %v, %v; want size %d", st, err, size)
			}

			// One read of more than the file: a short count at end of
			// file, for O_DIRECT and for io_uring alike.
			buf := alignedBuf(t, (size+4096)&^4095)
			fd := openT(t, fs.Path(name), unix.O_RDONLY|unix.O_DIRECT)
			defer unix.Close(fd)
			if n, err := unix.Pread(fd, buf, 0); err != nil || n != size || !bytes.Equal(buf[:n], data) {
				t.Fatalf("O_DIRECT pread of %d: %d, %v; want %d", len(buf), n, err, size)
			}
			clear(buf)
			if res := uringRW(t, ring.OpRead, fd, buf, 0); res != int32(size) || !bytes.Equal(buf[:size], data) {
				t.Fatalf("io_uring read of %d: %d; want %d", len(buf), res, size)
			}
		})
	}
}

// TestTruncate sets sizes through the mount by path, by descriptor and by
// O_TRUNC.
func TestTruncate(t *testing.T) {
	back := t.TempDir()
	writeBacking(t, back, "a", pattern(8192))
	fs := mountT(t, back)

	size := func() int64 {
		t.Helper()
		st, err := os.Stat(filepath.Join(back, "a"))
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	if err := os.Truncate(fs.Path("a"), 4097); err != nil || size() != 4097 {
		t.Fatalf("truncate by path: %v, backing size %d", err, size())
	}
	f, err := os.OpenFile(fs.Path("a"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(1<<20 + 3); err != nil || size() != 1<<20+3 {
		t.Fatalf("ftruncate: %v, backing size %d", err, size())
	}
	if st, err := f.Stat(); err != nil || st.Size() != 1<<20+3 {
		t.Fatalf("fstat through the mount: %v, %v", st, err)
	}
	g, err := os.Create(fs.Path("a"))
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if size() != 0 {
		t.Fatalf("O_TRUNC left backing size %d", size())
	}
}

// TestReadFault preads around a read fault. Direct I/O fails exactly the
// requests covering the fault; the page cache fails the fault's whole page.
// A pread from before the fault over it completes short at the fault's page
// either way: with O_DIRECT the direct part stops at the MaxRequest piece
// before the fault, and generic_file_read_iter then reads on through the
// page cache. (io_uring stops at the piece: see TestIOURing.)
func TestReadFault(t *testing.T) {
	back := t.TempDir()
	data := pattern(1 << 20)
	writeBacking(t, back, "src", data)
	writeBacking(t, back, "other", data)
	fs := mountT(t, back, Fault{Op: OpRead, Offset: faultAt, Errno: syscall.EIO, Name: "src"})

	modes := []struct {
		name  string
		flags int
		after int // the first offset past the fault a read can start at
	}{
		{"direct", unix.O_DIRECT, faultAt + 1},
		{"buffered", 0, (faultAt | 4095) + 1},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			fd := openT(t, fs.Path("src"), unix.O_RDONLY|m.flags)
			defer unix.Close(fd)
			buf := alignedBuf(t, 1<<20)

			const short = faultAt &^ 4095
			if n, err := unix.Pread(fd, buf[:short], 0); err != nil || n != short || !bytes.Equal(buf[:n], data[:n]) {
				t.Errorf("read before the fault: %d, %v; want %d", n, err, short)
			}
			if n, err := unix.Pread(fd, buf[:4096], faultAt-100); !errors.Is(err, syscall.EIO) {
				t.Errorf("read over the fault: %d, %v; want EIO", n, err)
			}
			if n, err := unix.Pread(fd, buf[:4096], int64(m.after)); err != nil || n != 4096 || !bytes.Equal(buf[:n], data[m.after:m.after+n]) {
				t.Errorf("read after the fault at %d: %d, %v", m.after, n, err)
			}
			n, err := unix.Pread(fd, buf, 0)
			if err != nil || n != short || !bytes.Equal(buf[:n], data[:n]) {
				t.Errorf("1 MiB read from 0: %d, %v; want the short count %d", n, err, short)
			}
			if n2, err := unix.Pread(fd, buf[n:], int64(n)); !errors.Is(err, syscall.EIO) {
				t.Errorf("read of the rest at %d: %d, %v; want EIO", n, n2, err)
			}
		})
	}
	if got, err := os.ReadFile(fs.Path("other")); err != nil || !bytes.Equal(got, data) {
		t.Errorf("a file the named fault does not cover: %d bytes, %v", len(got), err)
	}
	hits := fs.Hits()
	checkHits(t, hits, OpRead, "src", faultAt, syscall.EIO)
	// The direct 1 MiB read reached the server as 128 KiB requests at
	// the application's offsets.
	want := Hit{Op: OpRead, Name: "src", Offset: faultAt &^ (MaxRequest - 1), Len: MaxRequest, Errno: syscall.EIO}
	found := false
	for _, h := range hits {
		found = found || h == want
	}
	if !found {
		t.Errorf("no hit %v among %v", want, hits)
	}
}

// TestWriteFault writes around an ENOSPC write fault; writes reach the
// server at the application's offsets both with O_DIRECT and without (the
// server negotiates no writeback cache, so buffered writes are
// write-through).
func TestWriteFault(t *testing.T) {
	back := t.TempDir()
	data := pattern(1 << 20)
	fs := mountT(t, back, Fault{Op: OpWrite, Offset: faultAt, Errno: syscall.ENOSPC})

	const short = faultAt &^ (MaxRequest - 1)
	for _, m := range []struct {
		name  string
		flags int
	}{{"direct", unix.O_DIRECT}, {"buffered", 0}} {
		t.Run(m.name, func(t *testing.T) {
			name := "dst-" + m.name
			fd := openT(t, fs.Path(name), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|m.flags)
			defer unix.Close(fd)
			buf := alignedBuf(t, 1<<20)
			copy(buf, data)

			if n, err := unix.Pwrite(fd, buf[:4096], faultAt-100); !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("write over the fault: %d, %v; want ENOSPC", n, err)
			}
			if n, err := unix.Pwrite(fd, buf[faultAt+1:faultAt+1+4096], faultAt+1); err != nil || n != 4096 {
				t.Errorf("write after the fault: %d, %v", n, err)
			}
			n, err := unix.Pwrite(fd, buf, 0)
			if err != nil || n != short {
				t.Errorf("1 MiB write from 0: %d, %v; want the short count %d", n, err, short)
			}
			if n2, err := unix.Pwrite(fd, buf[n:], int64(n)); !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("write of the rest at %d: %d, %v; want ENOSPC", n, n2, err)
			}
			got, err := os.ReadFile(filepath.Join(back, name))
			if err != nil || len(got) != faultAt+1+4096 ||
				!bytes.Equal(got[:short], data[:short]) || !bytes.Equal(got[faultAt+1:], data[faultAt+1:faultAt+1+4096]) {
				t.Errorf("backing file: %d bytes, %v; want the written ranges", len(got), err)
			}
		})
	}
	for _, h := range fs.Hits() {
		checkHits(t, []Hit{h}, OpWrite, h.Name, faultAt, syscall.ENOSPC)
	}
}

// TestFsyncFault fails fsync and fdatasync of one file and not another.
func TestFsyncFault(t *testing.T) {
	back := t.TempDir()
	writeBacking(t, back, "a", pattern(4096))
	writeBacking(t, back, "b", pattern(4096))
	fs := mountT(t, back, Fault{Op: OpFsync, Errno: syscall.EIO, Name: "a"})

	a := openT(t, fs.Path("a"), unix.O_RDWR)
	defer unix.Close(a)
	b := openT(t, fs.Path("b"), unix.O_RDWR)
	defer unix.Close(b)
	if err := unix.Fsync(a); !errors.Is(err, syscall.EIO) {
		t.Errorf("fsync a: %v, want EIO", err)
	}
	if err := unix.Fdatasync(a); !errors.Is(err, syscall.EIO) {
		t.Errorf("fdatasync a: %v, want EIO", err)
	}
	if err := unix.Fsync(b); err != nil {
		t.Errorf("fsync b: %v", err)
	}
	want := Hit{Op: OpFsync, Name: "a", Errno: syscall.EIO}
	if hits := fs.Hits(); len(hits) != 2 || hits[0] != want || hits[1] != want {
		t.Errorf("Hits() = %v, want two of %v", hits, want)
	}
}

// TestIOURing checks what the engine's io_uring backend will see through
// the mount: a read or write over a fault completes short at the
// MaxRequest piece before it, and the rest completes with the errno.
func TestIOURing(t *testing.T) {
	back := t.TempDir()
	data := pattern(1 << 20)
	writeBacking(t, back, "src", data)
	fs := mountT(t, back,
		Fault{Op: OpRead, Offset: faultAt, Errno: syscall.EIO, Name: "src"},
		Fault{Op: OpWrite, Offset: faultAt, Errno: syscall.ENOSPC, Name: "dst"})
	const short = faultAt &^ (MaxRequest - 1)
	buf := alignedBuf(t, 1<<20)

	src := openT(t, fs.Path("src"), unix.O_RDONLY|unix.O_DIRECT)
	defer unix.Close(src)
	if res := uringRW(t, ring.OpRead, src, buf, 0); res != short || !bytes.Equal(buf[:short], data[:short]) {
		t.Errorf("io_uring read of 1 MiB from 0: %d, want the short count %d", res, short)
	}
	if res := uringRW(t, ring.OpRead, src, buf[:1<<20-short], short); res != -int32(syscall.EIO) {
		t.Errorf("io_uring read of the rest: %d, want -EIO", res)
	}

	copy(buf, data)
	dst := openT(t, fs.Path("dst"), unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT)
	defer unix.Close(dst)
	if res := uringRW(t, ring.OpWrite, dst, buf, 0); res != short {
		t.Errorf("io_uring write of 1 MiB from 0: %d, want the short count %d", res, short)
	}
	if res := uringRW(t, ring.OpWrite, dst, buf[short:], short); res != -int32(syscall.ENOSPC) {
		t.Errorf("io_uring write of the rest: %d, want -ENOSPC", res)
	}
	if got, err := os.ReadFile(filepath.Join(back, "dst")); err != nil || !bytes.Equal(got, data[:short]) {
		t.Errorf("backing dst: %d bytes, %v; want the first %d", len(got), err, short)
	}
}
