package align

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// checkDirectIO proves g's O_DIRECT alignments on the real file or
// device at path: writing and reading back 2*OffsetAlign bytes at offset
// OffsetAlign must work from a buffer that starts MemAlign bytes before
// a page boundary, so it is aligned to MemAlign and no more, and the
// I/O crosses pages (the case the block layer checks hardest). When
// strict, an offset aligned to only half of OffsetAlign must fail with
// EINVAL: the figure is not merely safe but exact. File systems that
// quietly fall back to buffered I/O on misalignment (btrfs, tmpfs) are
// checked with strict false.
//
// Half of MemAlign is only logged, not asserted: on Linux 6.18 a
// 512-byte write from an odd address inside one page succeeds on ext4
// and on loop devices that report dio_mem_align 512 (a page-crossing
// one fails), so the memory figure is safe but not the least the
// kernel takes, and what it takes has changed between releases.
//
// It returns what it wrote and where, for checks on a backing file.
func checkDirectIO(t *testing.T, path string, g Geometry, strict bool) (data []byte, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_DIRECT, 0)
	if err != nil && !strict && errors.Is(err, unix.EINVAL) {
		t.Logf("%s refuses O_DIRECT: %v", path, err)
		return nil, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, mem, page := 2*g.OffsetAlign, g.MemAlign, os.Getpagesize()
	off = int64(g.OffsetAlign)
	start := page - mem%page // aligned to mem, mem before a page boundary
	b, err := AllocBuffers(2, start+n+page)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	src, dst := b.Slots[0][start:start+n], b.Slots[1][start:start+n]
	for i := range src {
		src[i] = byte(rand.Uint32())
	}
	if w, err := f.WriteAt(src, off); err != nil || w != n {
		t.Fatalf("O_DIRECT write of %d at %d, memory aligned to %d: %d, %v", n, off, mem, w, err)
	}
	if r, err := f.ReadAt(dst, off); err != nil || r != n {
		t.Fatalf("O_DIRECT read of %d at %d: %d, %v", n, off, r, err)
	}
	if !bytes.Equal(src, dst) {
		t.Fatalf("O_DIRECT read back other bytes than written at %d", off)
	}
	if strict && g.OffsetAlign > 1 {
		half := g.OffsetAlign / 2
		if _, err := f.WriteAt(src, off+int64(half)); !errors.Is(err, unix.EINVAL) {
			t.Errorf("O_DIRECT write at offset aligned to only %d: %v, want EINVAL", half, err)
		}
	}
	if mem > 1 {
		_, err := f.WriteAt(b.Slots[0][start+mem/2:start+mem/2+n], off)
		t.Logf("O_DIRECT write from memory aligned to only %d: %v", mem/2, err)
	}
	return bytes.Clone(src), off
}

// TestFillDirect walks the fallback chains for MemAlign and OffsetAlign
// without a kernel: statx first, then the queue, then the logical block
// size, then 4096.
func TestFillDirect(t *testing.T) {
	q := &queueInfo{Queue: sysblock.Queue{DMAAlignment: 3, Logical: 4096}}
	noDma := &queueInfo{Queue: sysblock.Queue{DMAAlignment: -1}}
	tests := []struct {
		name       string
		st         statInfo
		q          *queueInfo
		logical    int
		mem, off   int
		direct     bool
		wantInNote string
	}{
		{"statx", statInfo{how: "statx", dio: true, dioMem: 4, dioOffset: 512}, q, 4096, 4, 512, true, "statx dio_offset_align"},
		{"statx says no", statInfo{how: "statx", dio: true}, q, 4096, 4, 4096, false, "no O_DIRECT on this file"},
		{"queue", statInfo{how: "statx"}, q, 4096, 4, 4096, true, "dma_alignment 3 + 1"},
		{"logical only", statInfo{how: "fstat"}, noDma, 512, 512, 512, true, "fstat reports no STATX_DIOALIGN"},
		{"nothing", statInfo{how: "statx"}, nil, 0, 4096, 4096, true, "assumed"},
	}
	for _, tt := range tests {
		g := Geometry{LogicalBlockSize: tt.logical, DirectSupported: true}
		g.fillDirect(tt.st, tt.q)
		if g.MemAlign != tt.mem || g.OffsetAlign != tt.off || g.DirectSupported != tt.direct {
			t.Errorf("%s: mem %d off %d direct %t, want %d %d %t",
				tt.name, g.MemAlign, g.OffsetAlign, g.DirectSupported, tt.mem, tt.off, tt.direct)
		}
		if !hasNote(g, tt.wantInNote) {
			t.Errorf("%s: notes %q lack %q", tt.name, g.Notes, tt.wantInNote)
		}
	}
}
