package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestDirectAlwaysWritesLastChunkBuffered: with --direct always, the
// README promises O_DIRECT for every aligned block and one buffered write
// for the unaligned tail, and -v says "the last 1 bytes ... are written
// buffered". But the engine turns O_DIRECT off for the whole last chunk
// (isTail: the chunk's length is not a multiple of the alignment), which
// is up to a block: copying 10 MiB + 1 byte with 8 MiB blocks writes the
// last 2 MiB + 1 byte through the page cache (strace: one pwrite64 of
// 2097153 bytes after F_SETFL drops O_DIRECT). The page cache shows it:
// after the copy, DST's pages of aligned data written buffered are
// resident, while O_DIRECT writes leave none. Only the page holding the
// tail may be.
func TestDirectAlwaysWritesLastChunkBuffered(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	const size = 10<<20 + 1
	randomFile(t, src, size, 17)
	for _, engine := range []string{"uring", "pool"} {
		os.Remove(dst)
		r := ringcp(t, "--engine", engine, "--direct", "always", "-b", "8M", "-v", "--progress", "none", src, dst)
		if r.code != exitOK {
			t.Fatalf("--engine %s: exit %d:\n%s", engine, r.code, r.stderr)
		}
		cached := residentPages(t, dst, size)
		page := int64(os.Getpagesize())
		tailPage := (size - 1) / page
		var aligned []int64
		for _, p := range cached {
			if p != tailPage {
				aligned = append(aligned, p)
			}
		}
		if len(aligned) > 0 {
			t.Errorf("--engine %s --direct always: %d pages of aligned data (%d KiB, from offset %d) went through the page cache; -v said only the tail would",
				engine, len(aligned), int64(len(aligned))*page>>10, aligned[0]*page)
		}
	}
}

// residentPages lists the pages of the first size bytes of path that are
// in the page cache (mincore).
func residentPages(t *testing.T, path string, size int) []int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (size+page-1)/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatal(errno)
	}
	var out []int64
	for i, v := range vec {
		if v&1 != 0 {
			out = append(out, int64(i))
		}
	}
	return out
}
