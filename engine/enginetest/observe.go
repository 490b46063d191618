package enginetest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/time/rate"
)

// recorder is an engine.Observer that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	data    map[int64][]byte
	holes   map[int64]int64
	durable []int64
}

func newRecorder() *recorder {
	return &recorder{data: map[int64][]byte{}, holes: map[int64]int64{}}
}

func (r *recorder) Data(rel int64, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.data[rel] = bytes.Clone(data)
}

func (r *recorder) Hole(rel, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.holes[rel] = n
}

func (r *recorder) Durable(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.durable = append(r.durable, n)
}

// Observed copies random sparse layouts with an Observer and a grid: the
// chunks it is shown tile the range exactly, data chunks hold SRC's bytes,
// hole chunks are zeros in SRC, no chunk crosses a grid line, and the
// barrier at the end reports the whole range durable.
func Observed(t *testing.T, tg Target) {
	const grid = 64 << 10
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 91))
			dir := t.TempDir()
			srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			want := MakeSparse(t, srcPath, RandomLayout(rng), seed)
			job, cleanup := NewJob(t, srcPath, dstPath, seed%2 == 0, 3*grid, 4)
			defer cleanup()
			job.Length, job.FinalSize, job.CutBackOnStop = int64(len(want)), int64(len(want)), true
			job.MapHoles, job.ZeroBlock, job.DstZeroed, job.Grid = true, 4096, true, grid
			rec := newRecorder()
			job.Observer = rec
			tg.serve(t, &job)
			if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
				t.Fatal(err)
			}
			CompareFile(t, dstPath, want)
			rec.check(t, want, grid)
		})
	}
}

// check verifies the chunks tile want and respect the grid.
func (r *recorder) check(t *testing.T, want []byte, grid int64) {
	t.Helper()
	var offs []int64
	for off := range r.data {
		offs = append(offs, off)
	}
	for off := range r.holes {
		offs = append(offs, off)
	}
	slices.Sort(offs)
	pos := int64(0)
	for _, off := range offs {
		if off != pos {
			t.Fatalf("chunks leave a gap or overlap at %d (next chunk at %d)", pos, off)
		}
		n, isHole := r.holes[off]
		if !isHole {
			d := r.data[off]
			n = int64(len(d))
			if !bytes.Equal(d, want[off:off+n]) {
				t.Fatalf("data chunk at %d differs from SRC", off)
			}
			if off%grid+n > grid {
				t.Fatalf("data chunk %d+%d crosses a grid line of %d", off, n, grid)
			}
		} else if off%grid != 0 || !isZeros(want[off:off+n]) {
			t.Fatalf("hole chunk %d+%d: not on the grid, or not zeros in SRC", off, n)
		}
		pos = off + n
	}
	if pos != int64(len(want)) {
		t.Fatalf("chunks end at %d, the range at %d", pos, len(want))
	}
	if len(r.durable) == 0 || r.durable[len(r.durable)-1] != int64(len(want)) {
		t.Fatalf("durable reports %v: want the whole range (%d) last", r.durable, len(want))
	}
}

// isZeros is the tests' own oracle, independent of internal/zeros.
func isZeros(b []byte) bool { return !slices.ContainsFunc(b, func(c byte) bool { return c != 0 }) }

// PeriodicBarriers copies under a rate cap, so that the copy takes about a
// second, with a barrier every 100 ms: the observer hears of several, each
// covering more, the last the whole range, and the copy is exact.
func PeriodicBarriers(t *testing.T, tg Target) {
	const size, bs = 8 << 20, 256 << 10
	dir := t.TempDir()
	src := RandomBytes(size, 92)
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, srcPath, src)
	job, cleanup := NewJob(t, srcPath, dstPath, true, bs, 4)
	defer cleanup()
	job.Length, job.FinalSize = size, size
	job.Rate = rate.NewLimiter(8<<20, bs)
	job.SyncEvery = 100 * time.Millisecond
	rec := newRecorder()
	job.Observer = rec
	tg.serve(t, &job)
	if _, err := engine.Run(context.Background(), job, tg.New); err != nil {
		t.Fatal(err)
	}
	CompareFile(t, dstPath, src)
	d := rec.durable
	if len(d) < 3 || !slices.IsSorted(d) || d[len(d)-1] != size {
		t.Fatalf("durable reports %v: want several, growing, ending at %d", d, size)
	}
}
