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
)

// Piece is one piece of a sparse SRC: "data", "hole" or "zeros".
type Piece struct {
	kind string // "data", "hole", "zeros"
	n    int64
}

// DataPiece, HolePiece and ZerosPiece are pieces of n bytes for layouts
// of MakeSparse: random data, a hole, written zeros.
func DataPiece(n int64) Piece  { return Piece{"data", n} }
func HolePiece(n int64) Piece  { return Piece{"hole", n} }
func ZerosPiece(n int64) Piece { return Piece{"zeros", n} }

// SparseProperty copies random extent layouts (data, holes, written zeros,
// data or a hole at the very end, sizes that are not a block multiple)
// into a new file and over an old file full of data, buffered and direct,
// with and without preallocation. Each copy must read back exactly like
// SRC, account for every byte, and a new DST must take no more blocks than
// SRC.
func SparseProperty(t *testing.T, tg Target) {
	for seed := uint64(1); seed <= 24; seed++ {
		rng := rand.New(rand.NewPCG(seed, 77))
		pieces := RandomLayout(rng)
		direct := seed%2 == 0
		prealloc := seed%3 != 0
		for _, overwrite := range []bool{false, true} {
			name := fmt.Sprintf("seed=%d/direct=%v/prealloc=%v/overwrite=%v", seed, direct, prealloc, overwrite)
			t.Run(name, func(t *testing.T) { sparseCopy(t, tg, pieces, direct, prealloc, overwrite, seed) })
		}
	}
}

// RandomLayout is a random sparse file: up to eight pieces of data, holes
// and written zeros, some not a block multiple, ending in data, a hole or
// zeros.
func RandomLayout(rng *rand.Rand) []Piece {
	kinds := []string{"data", "hole", "zeros"}
	var ps []Piece
	for i := rng.IntN(8) + 1; i > 0; i-- {
		n := int64(rng.IntN(6)) * 4096 * int64(rng.IntN(40)+1)
		if rng.IntN(4) == 0 {
			n += int64(rng.IntN(4096)) // not a block multiple
		}
		ps = append(ps, Piece{kinds[rng.IntN(3)], n})
	}
	last := []Piece{{"data", int64(rng.IntN(9000) + 1)}, {"hole", int64(rng.IntN(3) * 65536)}, {"zeros", 5000}}
	return append(ps, last[rng.IntN(3)])
}

// MakeSparse writes the layout at path and returns the file's content,
// holes read as zeros.
func MakeSparse(t testing.TB, path string, ps []Piece, seed uint64) []byte {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []byte
	for i, p := range ps {
		b := make([]byte, p.n)
		switch p.kind {
		case "data":
			b = RandomBytes(p.n, seed*100+uint64(i))
			if p.n > 0 {
				b[0] |= 1 // never a block of zeros by chance at its start
			}
			fallthrough
		case "zeros":
			if _, err := f.WriteAt(b, int64(len(want))); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, b...)
	}
	if err := f.Truncate(int64(len(want))); err != nil {
		t.Fatal(err)
	}
	return want
}

func sparseCopy(t *testing.T, tg Target, ps []Piece, direct, prealloc, overwrite bool, seed uint64) {
	dir := t.TempDir()
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	want := MakeSparse(t, srcPath, ps, seed)
	if overwrite {
		writeFile(t, dstPath, RandomBytes(int64(len(want))+123_457, seed+1))
	}
	job, cleanup := NewJob(t, srcPath, dstPath, direct, 64<<10, 4)
	job.Length = int64(len(want))
	job.FinalSize, job.CutBackOnStop, job.Preallocate = job.Length, true, prealloc
	job.MapHoles, job.ZeroBlock, job.DstZeroed = true, 4096, !overwrite
	if seed%4 == 1 {
		job.ZeroBlock = 0 // holes from SEEK_HOLE alone
	}
	tg.serve(t, &job)
	st, err := engine.Run(context.Background(), job, tg.New)
	// Close before counting blocks: ext4 keeps a per-inode preallocation
	// for a file open for writing and returns it on the last close.
	cleanup()
	if err != nil {
		t.Fatalf("layout %v: %v", ps, err)
	}
	got, err := os.ReadFile(dstPath)
	if err != nil {
		t.Fatal(err)
	}
	Compare(t, got, want)
	if sum := st.BytesWritten + st.BytesHoles + st.BytesZeroed; sum != job.Length {
		t.Fatalf("written %d + holes %d + zeroed %d = %d, want %d", st.BytesWritten, st.BytesHoles, st.BytesZeroed, sum, job.Length)
	}
	// Holes are mapped, not read: at most a filesystem block of slack at
	// each piece's edges.
	if limit := job.Length - holeBytes(ps) + int64(len(ps)+1)*8192; st.BytesRead > limit {
		t.Fatalf("layout %v: read %d bytes, more than the %d that are not holes (+slack)", ps, st.BytesRead, limit)
	}
	if !overwrite && blocks(t, dstPath) > blocks(t, srcPath) {
		t.Fatalf("layout %v: DST takes %d blocks, SRC %d", ps, blocks(t, dstPath), blocks(t, srcPath))
	}
}

func holeBytes(ps []Piece) int64 {
	var n int64
	for _, p := range ps {
		if p.kind == "hole" {
			n += p.n
		}
	}
	return n
}

func blocks(t *testing.T, path string) int64 {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks
}
