package ring

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadWriteRoundTrip writes a pattern and reads it back through the ring
// with every combination of plain/fixed buffers and buffered/O_DIRECT files.
func TestReadWriteRoundTrip(t *testing.T) {
	const size = 1 << 20
	for _, direct := range []bool{false, true} {
		for _, fixed := range []bool{false, true} {
			t.Run(fmt.Sprintf("direct=%v/fixed=%v", direct, fixed), func(t *testing.T) {
				roundTrip(t, size, direct, fixed)
			})
		}
	}
}

func roundTrip(t *testing.T, size int, direct, fixed bool) {
	flags := 0
	if direct {
		flags = syscall.O_DIRECT
	}
	f := tempFile(t, flags)
	r := newRing(t, 4, &Options{Flags: FlagSingleIssuer | FlagDeferTaskrun})
	out, in := mmapBuf(t, size), mmapBuf(t, size)
	fill(out, 0x5a)
	if fixed {
		if err := r.RegisterBuffers([][]byte{out, in}); err != nil {
			t.Fatalf("RegisterBuffers: %v", err)
		}
	}
	fd := int32(f.Fd())
	w := submitOne(t, r, func(s *SQE) {
		if fixed {
			s.PrepWriteFixed(fd, out, 4096, 0)
		} else {
			s.PrepWrite(fd, out, 4096)
		}
		s.UserData = 1
	})
	if w.Res != int32(size) || w.UserData != 1 {
		t.Fatalf("write CQE = %+v, want res %d user_data 1", w, size)
	}
	fsync := submitOne(t, r, func(s *SQE) { s.PrepFsync(fd, FsyncDatasync); s.UserData = 2 })
	if fsync.Res != 0 || fsync.UserData != 2 {
		t.Fatalf("fdatasync CQE = %+v", fsync)
	}
	rd := submitOne(t, r, func(s *SQE) {
		if fixed {
			s.PrepReadFixed(fd, in, 4096, 1)
		} else {
			s.PrepRead(fd, in, 4096)
		}
		s.UserData = 3
	})
	if rd.Res != int32(size) || rd.UserData != 3 {
		t.Fatalf("read CQE = %+v, want res %d", rd, size)
	}
	if !bytes.Equal(in, out) {
		t.Fatal("data read back differs from data written")
	}
	checkFileBytes(t, f, 4096, out)
}

// checkFileBytes reads f with plain pread, outside the ring, to confirm the
// ring's writes really reached the file.
func checkFileBytes(t *testing.T, f *os.File, off int64, want []byte) {
	t.Helper()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != off+int64(len(want)) {
		t.Fatalf("file size %d, want %d", fi.Size(), off+int64(len(want)))
	}
	plain, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	got := make([]byte, len(want))
	if _, err := plain.ReadAt(got, off); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("file content differs from what the ring wrote")
	}
}

func TestReadvWritev(t *testing.T) {
	f := tempFile(t, 0)
	r := newRing(t, 4, nil)
	a, b := mmapBuf(t, 4096), mmapBuf(t, 4096)
	fill(a, 1)
	fill(b, 2)
	iov := []unix.Iovec{{Base: &a[0]}, {Base: &b[0]}}
	iov[0].SetLen(4096)
	iov[1].SetLen(511) // an odd length: buffered files take any size
	w := submitOne(t, r, func(s *SQE) { s.PrepWritev(int32(f.Fd()), iov, 0) })
	if w.Res != 4096+511 {
		t.Fatalf("writev res = %d", w.Res)
	}
	c, d := mmapBuf(t, 4096), mmapBuf(t, 4096)
	riov := []unix.Iovec{{Base: &c[0]}, {Base: &d[0]}}
	riov[0].SetLen(4096)
	riov[1].SetLen(4096)
	rd := submitOne(t, r, func(s *SQE) { s.PrepReadv(int32(f.Fd()), riov, 0) })
	if rd.Res != 4096+511 {
		t.Fatalf("readv res = %d, want a short read at EOF of %d", rd.Res, 4096+511)
	}
	if !bytes.Equal(c, a) || !bytes.Equal(d[:511], b[:511]) {
		t.Fatal("readv data differs")
	}
}

func TestReadAtEOFReturnsZero(t *testing.T) {
	f := tempFile(t, 0)
	r := newRing(t, 2, nil)
	buf := mmapBuf(t, 4096)
	c := submitOne(t, r, func(s *SQE) { s.PrepRead(int32(f.Fd()), buf, 0) })
	if c.Res != 0 {
		t.Fatalf("read of an empty file: res = %d, want 0 (EOF)", c.Res)
	}
}

// O_DIRECT with a misaligned offset fails in the CQE with -EINVAL: errors
// arrive as negative res, not from submit.
func TestErrorArrivesInCQE(t *testing.T) {
	f := tempFile(t, syscall.O_DIRECT)
	r := newRing(t, 2, nil)
	buf := mmapBuf(t, 4096)
	c := submitOne(t, r, func(s *SQE) { s.PrepWrite(int32(f.Fd()), buf, 1) })
	if c.Res != -int32(syscall.EINVAL) {
		t.Fatalf("misaligned O_DIRECT write: res = %d, want -EINVAL", c.Res)
	}
}

func TestRegisteredFiles(t *testing.T) {
	f := tempFile(t, 0)
	r := newRing(t, 2, nil)
	if err := r.RegisterFiles([]int32{int32(f.Fd())}); err != nil {
		t.Fatalf("RegisterFiles: %v", err)
	}
	buf := mmapBuf(t, 4096)
	fill(buf, 9)
	c := submitOne(t, r, func(s *SQE) {
		s.PrepWrite(0, buf, 0) // fd 0 is the index of the registered file
		s.Flags |= SQEFixedFile
	})
	if c.Res != 4096 {
		t.Fatalf("write via fixed file: res = %d", c.Res)
	}
	checkFileBytes(t, f, 0, buf)
	if err := r.UnregisterFiles(); err != nil {
		t.Fatalf("UnregisterFiles: %v", err)
	}
}

// The kernel pins registered buffers and refuses file-backed shared
// mappings (EFAULT); anonymous mmap memory is what the buffer rule asks for.
func TestRegisterBuffersRefusesSharedFileMapping(t *testing.T) {
	f := tempFile(t, 0)
	f.Truncate(4096)
	m, err := unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	r := newRing(t, 2, nil)
	if err := r.RegisterBuffers([][]byte{m}); err == nil {
		t.Fatal("RegisterBuffers accepted a file-backed shared mapping")
	}
	if err := r.RegisterBuffers([][]byte{mmapBuf(t, 8192)}); err != nil {
		t.Fatalf("RegisterBuffers(anonymous): %v", err)
	}
	if err := r.UnregisterBuffers(); err != nil {
		t.Fatalf("UnregisterBuffers: %v", err)
	}
}

func TestIOWQMaxWorkers(t *testing.T) {
	r := newRing(t, 2, nil)
	if _, _, err := r.SetIOWQMaxWorkers(4, 0); err != nil {
		t.Fatalf("SetIOWQMaxWorkers: %v", err)
	}
	b, _, err := r.SetIOWQMaxWorkers(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b != 4 {
		t.Fatalf("bounded workers = %d after setting 4", b)
	}
}

func TestProbe(t *testing.T) {
	r := newRing(t, 2, nil)
	p, err := r.Probe()
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	for _, op := range []uint8{OpNop, OpRead, OpWrite, OpReadFixed, OpWriteFixed, OpFsync} {
		if !p.Supports(op) {
			t.Errorf("probe says opcode %d unsupported on this kernel", op)
		}
	}
	if p.LastOp() < OpWrite || p.Supports(255) {
		t.Errorf("LastOp = %d, Supports(255) = %v", p.LastOp(), p.Supports(255))
	}
}

// FALLOCATE through the ring: punch a hole in written data, which must then
// read back as zeros with the file size kept.
func TestFallocatePunchHole(t *testing.T) {
	f := tempFile(t, 0)
	data := make([]byte, 64<<10)
	fill(data, 4)
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	r := newRing(t, 2, nil)
	const mode = unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE
	c := submitOne(t, r, func(s *SQE) { s.PrepFallocate(int32(f.Fd()), mode, 8192, 16384) })
	if c.Res != 0 {
		t.Fatalf("fallocate res = %d", c.Res)
	}
	clear(data[8192 : 8192+16384])
	checkFileBytes(t, f, 0, data)
}
