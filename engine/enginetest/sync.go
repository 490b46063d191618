package enginetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/engine"
)

// SyncSpec is one sync for the suite: SRC of Size bytes, DST made from
// it by Mutate (which may change its length too).
type SyncSpec struct {
	Size    int64
	Granule int
	Direct  bool
	Mutate  string
	// MaxRequest, when positive, is the job's: requests smaller than a
	// chunk, and not whole granules.
	MaxRequest int
}

// mutations change DST (a copy of SRC) so that the sync has something to
// do: single bytes, whole granules, the ends, the last partial granule,
// data that became zeros (in SRC) and holes that became data (in DST).
var mutations = []string{"same", "bytes", "granules", "ends", "tail", "src-zeros", "dst-holes", "grown", "shrunk", "all"}

// Syncs: a sync makes DST equal to SRC byte for byte and writes exactly
// the granules that differ.
func Syncs(t *testing.T, tg Target) {
	for _, direct := range []bool{false, true} {
		for _, size := range []int64{0, 1, 511, 4097, 1<<20 + 3, 3<<20 + 4097} {
			for _, m := range mutations {
				for _, g := range []int{4096, 64 << 10} {
					sp := SyncSpec{Size: size, Granule: g, Direct: direct, Mutate: m}
					t.Run(fmt.Sprintf("direct=%v/%d/%s/g=%d", direct, size, m, g), func(t *testing.T) { Sync(t, tg, sp) })
				}
				sp := SyncSpec{Size: size, Granule: 64 << 10, Direct: direct, Mutate: "all", MaxRequest: 25 * 4096}
				t.Run(fmt.Sprintf("direct=%v/%d/max-request", direct, size), func(t *testing.T) { Sync(t, tg, sp) })
			}
		}
	}
}

// Sync runs one spec.
func Sync(t *testing.T, tg Target, sp SyncSpec) {
	t.Helper()
	dir := t.TempDir()
	src := RandomBytes(sp.Size, uint64(sp.Size)+3)
	rng := rand.New(rand.NewPCG(uint64(sp.Size), uint64(sp.Granule)))
	if sp.Mutate == "all" {
		for range 3 { // zeros on both sides: holes in both files
			zeroSome(rng, src, sp.Granule)
		}
	}
	old := mutate(rng, src, sp)
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeSparse(t, srcPath, src)
	writeSparse(t, dstPath, old)
	if int64(len(old)) < sp.Size {
		// DST must hold the range: grown first, as copier does.
		if err := os.Truncate(dstPath, sp.Size); err != nil {
			t.Fatal(err)
		}
	}
	job, cleanup := syncJob(t, srcPath, dstPath, sp.Direct, 256<<10, 4)
	defer cleanup()
	job.Length, job.SyncGranule, job.FinalSize, job.MaxRequest = sp.Size, sp.Granule, sp.Size, sp.MaxRequest
	if sp.Size == 0 {
		job.FinalSize = 0 // 0 leaves the size alone: cut it by hand below
	}
	tg.serve(t, &job)
	progress := &engine.Progress{}
	job.Progress = progress
	st, err := engine.Run(context.Background(), job, tg.New)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if sp.Size == 0 {
		os.Truncate(dstPath, 0)
	}
	CompareFile(t, dstPath, src)
	granules, bytes := differing(src, old, sp.Granule)
	moved := st.BytesWritten + st.BytesZeroed + st.BytesHoles
	if st.GranulesChanged != granules || moved != bytes || st.BytesRead != sp.Size || st.BytesReadDst != sp.Size || !st.Synced {
		t.Fatalf("stats %+v: want %d granules (%d bytes) changed, %d read on each side, synced", st, granules, bytes, sp.Size)
	}
	if progress.Done.Load() != sp.Size {
		t.Fatalf("progress done %d, want %d", progress.Done.Load(), sp.Size)
	}
}

// mutate is DST's old content: SRC changed as the spec says.
func mutate(rng *rand.Rand, src []byte, sp SyncSpec) []byte {
	old := append([]byte(nil), src...)
	n := len(old)
	flip := func(i int) {
		if i >= 0 && i < len(old) {
			old[i] ^= 0x5a
		}
	}
	m := sp.Mutate
	if m == "bytes" || m == "all" {
		for range 5 {
			if n > 0 {
				flip(rng.IntN(n))
			}
		}
	}
	if m == "granules" || m == "all" {
		for range 3 {
			if n > 0 {
				at := rng.IntN(n) / sp.Granule * sp.Granule
				copy(old[at:min(at+sp.Granule, n)], RandomBytes(int64(sp.Granule), uint64(at)))
			}
		}
	}
	if m == "ends" || m == "all" {
		flip(0)
		flip(n - 1)
	}
	if m == "tail" || m == "all" {
		flip(n/sp.Granule*sp.Granule + (n%sp.Granule)/2)
	}
	for range 3 {
		if m == "src-zeros" || m == "all" {
			zeroSome(rng, src, sp.Granule) // data that became zeros
		}
		if m == "dst-holes" || m == "all" {
			zeroSome(rng, old, sp.Granule) // holes that became data
		}
	}
	switch m {
	case "grown":
		old = old[:n/2] // SRC grew
	case "shrunk":
		old = append(old, RandomBytes(int64(sp.Granule)*3+17, 5)...) // SRC shrank
	}
	return old
}

// zeroSome clears a random granule of b.
func zeroSome(rng *rand.Rand, b []byte, g int) {
	if len(b) == 0 {
		return
	}
	at := rng.IntN(len(b)) / g * g
	clear(b[at:min(at+g, len(b))])
}

// differing counts the granules of src that old (zeros past its end)
// does not hold, and their bytes.
func differing(src, old []byte, g int) (granules, bytes int64) {
	for i := 0; i < len(src); i += g {
		end := min(i+g, len(src))
		for k := i; k < end; k++ {
			var o byte
			if k < len(old) {
				o = old[k]
			}
			if o != src[k] {
				granules++
				bytes += int64(end - i)
				break
			}
		}
	}
	return granules, bytes
}
