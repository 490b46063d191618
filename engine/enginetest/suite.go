// Package enginetest is the one test suite every engine Backend runs: the
// same copies, at awkward sizes, buffered and O_DIRECT, whole files and
// ranges, each compared byte for byte.
package enginetest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
)

// Sizes are the copy lengths every backend must get right: empty, one byte,
// under a sector, around a page, under and over a block, and a big odd one.
var Sizes = []int64{0, 1, 511, 4095, 4096, 4097, 1<<20 - 1, 1<<20 + 3, 64<<20 + 12345}

// Spec is one copy for the suite.
type Spec struct {
	Size      int64 // SRC size
	Direct    bool
	BlockSize int
	Depth     int
	SrcOff    int64
	DstOff    int64
	Length    int64 // -1: from SrcOff to the end of SRC
	DstInit   int64 // bytes of old data already in DST
	Truncate  bool  // set DST's size to DstOff+Length at the end
}

// Target is what the suite runs on: a backend, and where it moves the
// bytes.
type Target struct {
	New engine.NewBackend
	// Serve, when not nil, may reach a copy's files through other ends
	// (an NBD export serving SRC's or DST's file): once the job is set up
	// and before it runs, it sets job.Ends[id] and clears job.Files[id]
	// for the ends it serves (the suite still closes the files). The
	// files are then read and compared as they are.
	Serve func(t testing.TB, job *engine.Job)
}

func (tg Target) serve(t testing.TB, job *engine.Job) {
	t.Helper()
	if tg.Serve != nil {
		tg.Serve(t, job)
	}
}

// EndName is the name errors give an end of job: its file's path, or the
// URI of the end serving it.
func EndName(job engine.Job, id engine.FileID) string {
	if e := job.Ends[id]; e != nil {
		return e.Name()
	}
	return job.Files[id].Name()
}

// Run runs the whole suite against a backend.
func Run(t *testing.T, nb engine.NewBackend) { RunTarget(t, Target{New: nb}) }

// RunScheduling runs what only backends on descriptors do: I/O
// priorities on every request, and requests issued blocking (io_uring's
// IOSQE_ASYNC; the pool always blocks).
func RunScheduling(t *testing.T, nb engine.NewBackend) {
	t.Run("ioprio", func(t *testing.T) { IOPriority(t, nb) })
	t.Run("ioprio-scheduled", func(t *testing.T) { IOPrioScheduled(t, nb) })
	t.Run("blocking", func(t *testing.T) { Blocking(t, nb) })
}

// RunTarget runs the whole suite against a target.
func RunTarget(t *testing.T, tg Target) {
	t.Run("sizes", func(t *testing.T) { sizes(t, tg) })
	t.Run("ranges", func(t *testing.T) {
		for _, direct := range []bool{false, true} {
			for _, sp := range rangeSpecs(direct) {
				t.Run(fmt.Sprintf("%+v", sp), func(t *testing.T) { Copy(t, tg, sp) })
			}
		}
	})
	t.Run("overwrite-and-truncate", func(t *testing.T) {
		for _, direct := range []bool{false, true} {
			Copy(t, tg, Spec{Size: 100_000, Direct: direct, BlockSize: 1 << 16, Depth: 3, Length: -1, DstInit: 3 << 20, Truncate: true})
		}
	})
	t.Run("depth-one", func(t *testing.T) {
		Copy(t, tg, Spec{Size: 1<<20 + 7, Direct: true, BlockSize: 4096, Depth: 1, Length: -1, Truncate: true})
	})
	t.Run("sparse", func(t *testing.T) { SparseProperty(t, tg) })
	t.Run("reservation", func(t *testing.T) { ReservationGivenBack(t, tg) })
	t.Run("reservation-cut-short", func(t *testing.T) { ReservationCutShort(t, tg) })
	t.Run("random", func(t *testing.T) { RandomCopies(t, tg) })
	t.Run("chaos", func(t *testing.T) { ChaosCopies(t, tg) })
	t.Run("stopped", func(t *testing.T) { StoppedCopies(t, tg) })
	t.Run("shared-budget", func(t *testing.T) { SharedBudget(t, tg) })
	t.Run("rate-cap", func(t *testing.T) { RateCap(t, tg) })
	t.Run("cap-waits", func(t *testing.T) { CapWaits(t, tg) })
	t.Run("measured", func(t *testing.T) { Measured(t, tg) })
	t.Run("neighbour", func(t *testing.T) { Neighbourly(t, tg) })
	t.Run("observed", func(t *testing.T) { Observed(t, tg) })
	t.Run("periodic-barriers", func(t *testing.T) { PeriodicBarriers(t, tg) })
	t.Run("read-passes", func(t *testing.T) { ReadPasses(t, tg) })
	t.Run("only-ranges", func(t *testing.T) { OnlyRanges(t, tg) })
	t.Run("sync", func(t *testing.T) { Syncs(t, tg) })
	faults(t, tg)
}

// RunReduced is the part of the suite that runs a backend's other
// settings (the io_uring backend without fixed buffers, vectored...): the
// sizes, the faults and the stopped copies.
func RunReduced(t *testing.T, nb engine.NewBackend) {
	tg := Target{New: nb}
	t.Run("sizes", func(t *testing.T) { sizes(t, tg) })
	t.Run("stopped", func(t *testing.T) { StoppedCopies(t, tg) })
	faults(t, tg)
}

func faults(t *testing.T, tg Target) {
	t.Run("failed", func(t *testing.T) { FailedCopies(t, tg) })
	t.Run("backend-failed", func(t *testing.T) { BackendFailures(t, tg) })
	t.Run("source-shrank", func(t *testing.T) { SourceShrank(t, tg) })
	t.Run("canceled", func(t *testing.T) { Canceled(t, tg) })
}

func sizes(t *testing.T, tg Target) {
	for _, size := range Sizes {
		for _, direct := range []bool{false, true} {
			bs := 64 << 10
			if size > 8<<20 {
				bs = align.DefaultBlockSize
			}
			spec := Spec{Size: size, Direct: direct, BlockSize: bs, Depth: 4, Length: -1, Truncate: true}
			t.Run(fmt.Sprintf("%d/direct=%v", size, direct), func(t *testing.T) { Copy(t, tg, spec) })
		}
	}
}

// rangeSpecs copy a middle part of SRC into the middle of an existing DST,
// which must keep its bytes outside the range.
func rangeSpecs(direct bool) []Spec {
	return []Spec{
		{Size: 1 << 20, Direct: direct, BlockSize: 8192, Depth: 4, SrcOff: 4096, DstOff: 8192, Length: 12289, DstInit: 1 << 20},
		{Size: 1 << 20, Direct: direct, BlockSize: 8192, Depth: 4, SrcOff: 65536, DstOff: 0, Length: 1<<20 - 65536, DstInit: 2 << 20},
		{Size: 300_000, Direct: direct, BlockSize: 4096, Depth: 8, SrcOff: 0, DstOff: 1 << 20, Length: -1, DstInit: 4096},
		{Size: 5000, Direct: direct, BlockSize: 4096, Depth: 2, SrcOff: 4096, DstOff: 4096, Length: 0, DstInit: 8192},
	}
}

// Copy runs one spec and checks DST byte for byte against what it must be.
func Copy(t *testing.T, tg Target, sp Spec) {
	t.Helper()
	dir := t.TempDir()
	src := RandomBytes(sp.Size, uint64(sp.Size)+1)
	old := RandomBytes(sp.DstInit, 99)
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, srcPath, src)
	if sp.DstInit > 0 {
		writeFile(t, dstPath, old)
	}
	length := sp.Length
	if length < 0 {
		length = sp.Size - sp.SrcOff
	}
	job, cleanup := NewJob(t, srcPath, dstPath, sp.Direct, sp.BlockSize, sp.Depth)
	defer cleanup()
	job.SrcOff, job.DstOff, job.Length = sp.SrcOff, sp.DstOff, length
	if sp.Truncate {
		job.FinalSize, job.CutBackOnStop = sp.DstOff+length, true
	}
	tg.serve(t, &job)
	st, err := engine.Run(context.Background(), job, tg.New)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st.BytesWritten != length || st.BytesRead != length || !st.Synced {
		t.Fatalf("stats %+v: want %d bytes read and written, synced", st, length)
	}
	want := expected(old, src[sp.SrcOff:sp.SrcOff+length], sp.DstOff, sp.Truncate)
	CompareFile(t, dstPath, want)
}

// expected is what DST must hold: the old bytes, the copied range laid over
// them at dstOff (zeros in any gap), cut at the range's end when truncating.
func expected(old, data []byte, dstOff int64, truncate bool) []byte {
	end := dstOff + int64(len(data))
	size := max(int64(len(old)), end)
	if truncate {
		size = end
	}
	out := make([]byte, size)
	copy(out, old)
	copy(out[dstOff:], data)
	return out
}

// CompareFile fails the test unless the file at path holds exactly want.
func CompareFile(t testing.TB, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	Compare(t, got, want)
}

// Compare fails the test at the first differing byte.
func Compare(t testing.TB, got, want []byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("DST is %d bytes, want %d", len(got), len(want))
	}
	if i := firstDiff(got, want); i >= 0 {
		t.Fatalf("DST differs at byte %d: %#x, want %#x", i, got[i], want[i])
	}
}

func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// NewJob opens SRC and DST (creating DST) as copier does, with O_DIRECT
// on both when direct, allocates buffers, and returns a cleanup.
func NewJob(t testing.TB, srcPath, dstPath string, direct bool, bs, depth int) (engine.Job, func()) {
	t.Helper()
	flag := 0
	if direct {
		flag = syscall.O_DIRECT
	}
	src := mustOpen(t, srcPath, os.O_RDONLY|flag)
	dst := mustOpen(t, dstPath, os.O_WRONLY|os.O_CREATE|flag)
	job := engine.Job{BlockSize: bs, SrcAlign: 1, DstAlign: 1, Sync: true}
	job.Files[engine.FileSrc], job.Files[engine.FileDst] = src, dst
	if direct {
		// No FileDstTail: the engine turns O_DIRECT off on DST for an
		// unaligned tail, as copier relies on.
		job.SrcAlign, job.DstAlign = dioAlign(t, src), dioAlign(t, dst)
	}
	return job, withBuffers(t, &job, depth)
}

// withBuffers gives job depth buffers of a block each, and returns the
// cleanup that closes its files and frees them.
func withBuffers(t testing.TB, job *engine.Job, depth int) func() {
	t.Helper()
	bufs, err := align.AllocBuffers(depth, job.BlockSize)
	if err != nil {
		t.Fatal(err)
	}
	job.Buffers = bufs.Slots
	files := job.Files
	return func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
		bufs.Free()
	}
}

func dioAlign(t testing.TB, f *os.File) int {
	g, err := align.Probe(f)
	if err != nil {
		t.Fatal(err)
	}
	return g.OffsetAlign
}

func mustOpen(t testing.TB, path string, flag int) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// RandomBytes is reproducible noise: every block differs, so a block
// written at the wrong offset is caught.
func RandomBytes(n int64, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := int64(0); i+8 <= n; i += 8 {
		v := r.Uint64()
		for k := int64(0); k < 8; k++ {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}
