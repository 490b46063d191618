package faultfs

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// faultAt is where the fault tests put their fault: inside the third
// MaxRequest piece of a read or write from offset 0, and not page-aligned,
// so that direct I/O (precise to the byte and split at MaxRequest) and the
// page cache (precise to the page) give different, predictable short
// counts.
const faultAt = 300000

// mountT mounts backing for a test. The tests mount with mount(2) and so
// need root; Mount itself also works unprivileged through fusermount3.
func mountT(t *testing.T, backing string, faults ...Fault) *FS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("faultfs tests need root: they mount with mount(2)")
	}
	return Mount(t, backing, faults...)
}

// pattern returns n bytes in which every 8-byte word is different, so data
// read from the wrong offset cannot pass for the right data (a pattern with
// a short period, like byte(i), would hide exactly that).
func pattern(n int) []byte {
	b := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], uint64(i+1)*0x9e3779b97f4a7c15)
	}
	return b[:n:n]
}

// alignedBuf returns an n-byte page-aligned buffer outside the Go heap, for
// O_DIRECT and io_uring, unmapped when the test ends.
func alignedBuf(t *testing.T, n int) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap %d bytes: %v", n, err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

func writeBacking(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func openT(t *testing.T, path string, flags int) int {
	t.Helper()
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return fd
}

// checkHits asserts that hits is not empty and that every hit is op on
// name, covers at, and returned errno.
func checkHits(t *testing.T, hits []Hit, op, name string, at int64, errno syscall.Errno) {
	t.Helper()
	if len(hits) == 0 {
		t.Errorf("no %s hits recorded", op)
	}
	for _, h := range hits {
		if h.Op != op || h.Name != name || h.Errno != errno || h.Offset > at || h.Offset+int64(h.Len) <= at {
			t.Errorf("hit %v: want %s on %s covering %d with %v", h, op, name, at, errno)
		}
	}
}
