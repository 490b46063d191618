package faultfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestODirect pins down O_DIRECT through the mount as found on Linux 6.18:
// open and create with O_DIRECT succeed (the flag stays on the file), and
// FUSE enforces no alignment at all, so an engine cannot count on the
// mount to catch a misaligned buffer, offset or length. statx reports no
// STATX_DIOALIGN for the mount (FUSE does not fill it in), which a
// DIOALIGN probe must not read as "no O_DIRECT".
func TestODirect(t *testing.T) {
	back := t.TempDir()
	writeBacking(t, back, "a", pattern(8192))
	fs := mountT(t, back)

	fd := openT(t, fs.Path("a"), unix.O_RDWR|unix.O_DIRECT)
	defer unix.Close(fd)
	created := openT(t, fs.Path("new"), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_DIRECT)
	defer unix.Close(created)
	for _, fd := range []int{fd, created} {
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || fl&unix.O_DIRECT == 0 {
			t.Errorf("F_GETFL = %#x, %v; want O_DIRECT set", fl, err)
		}
	}

	// Misaligned in memory, in the file and in length.
	buf := alignedBuf(t, 3*4096)
	data := pattern(4097)
	copy(buf[1:], data)
	if n, err := unix.Pwrite(created, buf[1:1+4097], 3); err != nil || n != 4097 {
		t.Fatalf("misaligned O_DIRECT pwrite: %d, %v", n, err)
	}
	clear(buf)
	if n, err := unix.Pread(created, buf[5:5+4097], 3); err != nil || n != 4097 || !bytes.Equal(buf[5:5+n], data) {
		t.Fatalf("misaligned O_DIRECT pread: %d, %v", n, err)
	}
	if got, err := os.ReadFile(filepath.Join(back, "new")); err != nil || !bytes.Equal(got[3:], data) {
		t.Fatalf("backing file after misaligned writes: %d bytes, %v", len(got), err)
	}

	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, fs.Path("a"), 0, unix.STATX_BASIC_STATS|unix.STATX_DIOALIGN, &stx); err != nil {
		t.Fatalf("statx: %v", err)
	}
	if stx.Mask&unix.STATX_DIOALIGN != 0 {
		t.Errorf("statx through the mount reports DIOALIGN (mem %d, offset %d); update the doc and this test",
			stx.Dio_mem_align, stx.Dio_offset_align)
	}
}

// TestCopyFileRange shows that copy_file_range cannot carry data past a
// fault: the server has no COPY_FILE_RANGE, so the kernel copies through
// READ and WRITE requests, which the faults see.
func TestCopyFileRange(t *testing.T) {
	back := t.TempDir()
	data := pattern(1 << 20)
	writeBacking(t, back, "src", data)
	fs := mountT(t, back, Fault{Op: OpRead, Offset: faultAt, Errno: syscall.EIO, Name: "src"})

	in := openT(t, fs.Path("src"), unix.O_RDONLY)
	defer unix.Close(in)
	out := openT(t, fs.Path("dst"), unix.O_RDWR|unix.O_CREAT)
	defer unix.Close(out)
	var total int
	var err error
	for {
		var n int
		n, err = unix.CopyFileRange(in, nil, out, nil, 1<<20-total, 0)
		if err != nil || n == 0 {
			break
		}
		total += n
	}
	if !errors.Is(err, syscall.EIO) || total > faultAt {
		t.Fatalf("copy_file_range: %d bytes then %v; want EIO before byte %d", total, err, faultAt)
	}
	if got, rerr := os.ReadFile(filepath.Join(back, "dst")); rerr != nil || !bytes.Equal(got, data[:total]) {
		t.Fatalf("backing dst: %d bytes, %v; want the %d copied", len(got), rerr, total)
	}
	checkHits(t, fs.Hits(), OpRead, "src", faultAt, syscall.EIO)
}

// TestSeekDataHole finds the backing file's data and holes through the
// mount.
func TestSeekDataHole(t *testing.T) {
	back := t.TempDir()
	f, err := os.Create(filepath.Join(back, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{0, 1 << 20} {
		if _, err := f.WriteAt(pattern(4096), off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(4 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fs := mountT(t, back)

	mfd := openT(t, fs.Path("sparse"), unix.O_RDONLY)
	defer unix.Close(mfd)
	bfd := openT(t, filepath.Join(back, "sparse"), unix.O_RDONLY)
	defer unix.Close(bfd)
	for _, whence := range []int{unix.SEEK_DATA, unix.SEEK_HOLE} {
		for _, off := range []int64{0, 4096, 512 << 10, 1 << 20, 2 << 20} {
			want, werr := unix.Seek(bfd, off, whence)
			got, gerr := unix.Seek(mfd, off, whence)
			if got != want || !errors.Is(gerr, werr) {
				t.Errorf("lseek(%d, whence %d): mount %d, %v; backing %d, %v", off, whence, got, gerr, want, werr)
			}
		}
	}
}

// TestPassDirect pins down the PassDirect mode, as go-fuse's loopback
// behaves: a file opened with O_DIRECT is written by the server with
// O_DIRECT on its backing file (ext4 here), so whole aligned blocks pass
// and an unaligned tail fails with EINVAL; clearing O_DIRECT on the
// client's descriptor changes nothing on the server; a fresh open without
// O_DIRECT, of the same file, writes the tail.
func TestPassDirect(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("faultfs tests need root: they mount with mount(2)")
	}
	back := t.TempDir()
	writeBacking(t, back, "a", pattern(3*4096))
	fs := MountWith(t, back, Options{PassDirect: true})

	fd := openT(t, fs.Path("a"), unix.O_RDWR|unix.O_DIRECT)
	defer unix.Close(fd)
	buf := alignedBuf(t, 2*4096)
	copy(buf, pattern(2*4096))
	if n, err := unix.Pwrite(fd, buf[:4096], 4096); err != nil || n != 4096 {
		t.Fatalf("aligned O_DIRECT pwrite: %d, %v", n, err)
	}
	if _, err := unix.Pwrite(fd, buf[:100], 8192); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("unaligned O_DIRECT pwrite: %v; want EINVAL from the backing file", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Pwrite(fd, buf[:100], 8192); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("unaligned pwrite after clearing O_DIRECT: %v; want EINVAL still (the server never hears of it)", err)
	}
	fresh := openT(t, fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_WRONLY)
	defer unix.Close(fresh)
	if n, err := unix.Pwrite(fresh, buf[:100], 8192); err != nil || n != 100 {
		t.Fatalf("unaligned pwrite through a fresh open without O_DIRECT: %d, %v", n, err)
	}
	got, err := os.ReadFile(filepath.Join(back, "a"))
	if err != nil || !bytes.Equal(got[4096:8192], buf[:4096]) || !bytes.Equal(got[8192:8292], buf[:100]) {
		t.Fatalf("backing file: %v", err)
	}
}
