package enginetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/extents"
)

// OnlyRanges: a copy restricted to Ranges writes SRC's bytes there (holes
// and zero runs in them made zero), and leaves every other byte of DST
// as it was; it reads nothing outside them.
func OnlyRanges(t *testing.T, tg Target) {
	for _, direct := range []bool{false, true} {
		for _, size := range []int64{0, 4096, 1<<20 + 3, 3<<20 + 4097} {
			for seed := uint64(1); seed <= 3; seed++ {
				t.Run(fmt.Sprintf("direct=%v/%d/%d", direct, size, seed), func(t *testing.T) {
					onlyRanges(t, tg, direct, size, seed)
				})
			}
		}
	}
}

func onlyRanges(t *testing.T, tg Target, direct bool, size int64, seed uint64) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, uint64(size)))
	src := RandomBytes(size, seed+7)
	if size > 2<<20 {
		clear(src[1<<20 : 1<<20+300<<10]) // a hole in SRC, inside or across ranges
	}
	old := RandomBytes(size+8192, seed+100) // DST is larger: its tail is never touched
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeSparse(t, srcPath, src)
	writeFile(t, dstPath, old)
	ranges := randomRanges(rng, size, 4096)

	job, cleanup := syncJob(t, srcPath, dstPath, direct, 64<<10, 4)
	defer cleanup()
	job.Length, job.RangesOnly, job.Ranges = size, true, ranges
	job.MapHoles, job.ZeroBlock, job.Preallocate = true, 4096, true
	tg.serve(t, &job)
	st, err := engine.Run(context.Background(), job, tg.New)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := append([]byte(nil), old...)
	for _, r := range ranges {
		copy(want[r.Off:r.End()], src[r.Off:r.End()])
	}
	CompareFile(t, dstPath, want)
	moved := st.BytesWritten + st.BytesZeroed + st.BytesHoles
	if moved != ranges.Total() || st.BytesRead > ranges.Total() || !st.Synced {
		t.Fatalf("stats %+v: want %d bytes of ranges moved, at most that read, synced", st, ranges.Total())
	}
}

// randomRanges are a few ranges within size, edges multiples of a except
// one that may end at size.
func randomRanges(rng *rand.Rand, size, a int64) extents.List {
	var rs []extents.Range
	for range rng.IntN(6) {
		off := rng.Int64N(size/a+1) * a
		n := rng.Int64N(size/a/4+2) * a
		rs = append(rs, extents.Range{Off: off, Len: min(n, size-off)})
	}
	if size > 0 && rng.IntN(2) == 0 {
		off := (size - 1) / a * a
		rs = append(rs, extents.Range{Off: off, Len: size - off})
	}
	return extents.Merge(rs)
}

// syncJob opens SRC read-only and DST for reading and writing, as a
// sync needs.
func syncJob(t testing.TB, srcPath, dstPath string, direct bool, bs, depth int) (engine.Job, func()) {
	t.Helper()
	flag := 0
	if direct {
		flag = syscall.O_DIRECT
	}
	src := mustOpen(t, srcPath, os.O_RDONLY|flag)
	dst := mustOpen(t, dstPath, os.O_RDWR|flag)
	job := engine.Job{BlockSize: bs, SrcAlign: 1, DstAlign: 1, Sync: true}
	job.Files[engine.FileSrc], job.Files[engine.FileDst] = src, dst
	if direct {
		job.SrcAlign, job.DstAlign = dioAlign(t, src), dioAlign(t, dst)
	}
	return job, withBuffers(t, &job, depth)
}

// writeSparse writes b leaving its 64 KiB runs of zeros as holes.
func writeSparse(t testing.TB, path string, b []byte) {
	t.Helper()
	f := mustOpen(t, path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	defer f.Close()
	const run = 64 << 10
	for off := 0; off < len(b); off += run {
		p := b[off:min(off+run, len(b))]
		if isZeros(p) {
			continue
		}
		if _, err := f.WriteAt(p, int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		t.Fatal(err)
	}
}
