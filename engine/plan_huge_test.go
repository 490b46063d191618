package engine

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// hugeSparse makes a sparse file of size bytes on tmpfs, which allows
// sizes up to math.MaxInt64, with 4096 bytes of data ending 4096 bytes
// before its end.
func hugeSparse(t *testing.T, size int64) *os.File {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Skipf("needs tmpfs on /dev/shm for a file of %d bytes (statfs: %v)", size, err)
	}
	dir, err := os.MkdirTemp("/dev/shm", "ringcp-plan-")
	if err != nil {
		t.Skipf("cannot write to /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f, err := os.Create(filepath.Join(dir, "huge"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(size); err != nil {
		t.Skipf("tmpfs refused a size of %d: %v", size, err)
	}
	if _, err := f.WriteAt(make([]byte, 4096), size-8192); err != nil && !errors.Is(err, unix.EFBIG) {
		t.Fatal(err)
	}
	return f
}

// TestPlannerNearMaxInt64: the planner's chunk ends and rounded extent
// edges must not wrap negative at the top of an 8 EiB sparse SRC
// (pos+maxHoleChunk and RoundUp(end) passed math.MaxInt64 there). From
// 3 GiB before the end, the chunks must tile the rest of the range, each
// positive, and find the data.
func TestPlannerNearMaxInt64(t *testing.T) {
	for _, size := range []int64{9223372036854775000, math.MaxInt64} {
		f := hugeSparse(t, size)
		job := Job{Length: size, BlockSize: 1 << 20, SrcAlign: 4096, DstAlign: 4096, Sparse: Sparse{MapHoles: true}}
		job.Files[FileSrc] = f
		p := newPlanner(&job)
		p.pos = (size - 3*maxHoleChunk) &^ 4095
		data := int64(0)
		for i := 0; !p.done(); i++ {
			if i > 100 {
				t.Fatalf("size %d: still planning at %d after 100 chunks", size, p.pos)
			}
			at := p.pos
			c, err := p.next(job.BlockSize)
			if err != nil {
				t.Fatalf("size %d: next at %d: %v", size, at, err)
			}
			if c.rel != at || c.n <= 0 || c.rel+int64(c.n) > size || c.rel+int64(c.n) < c.rel {
				t.Fatalf("size %d: chunk %+v planned at %d", size, c, at)
			}
			if !c.hole {
				data += int64(c.n)
			}
		}
		if p.pos != size {
			t.Errorf("size %d: planning ended at %d", size, p.pos)
		}
		if data < 4096 {
			t.Errorf("size %d: %d bytes planned as data, want the 4096 written near the end", size, data)
		}
	}
}
