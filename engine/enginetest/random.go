package enginetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
)

// randomSpec is one copy of RandomCopies: a sparse SRC, a range with its
// own offsets and length, and one of the kinds of DST the copier makes.
type randomSpec struct {
	pieces         []Piece
	direct         bool
	srcOff, dstOff int64
	length         int64
	dst            string // "new", "truncated", "range" (old data kept around the range), "zeroed" (old zeros, vouched for)
	oldSize        int64
	bs, depth      int
	zeroBlock      int
	holeAlign      int
	mapHoles       bool
	prealloc       bool
}

func (sp randomSpec) String() string {
	return fmt.Sprintf("%s direct=%v src+%d dst+%d len=%d old=%d bs=%d depth=%d zb=%d ha=%d map=%v prealloc=%v layout=%v",
		sp.dst, sp.direct, sp.srcOff, sp.dstOff, sp.length, sp.oldSize, sp.bs, sp.depth, sp.zeroBlock, sp.holeAlign, sp.mapHoles, sp.prealloc, sp.pieces)
}

// RandomCopies is a differential test over what SparseProperty keeps fixed:
// random SRC and DST offsets, lengths that end anywhere, new, truncated and
// existing DSTs (old data around the range, or old zeros vouched for), hole
// alignment, zero block, block size and depth, buffered and O_DIRECT. Each
// DST must read back as the old content with the range laid over it, at the
// size the copier's rules give, and every byte must be accounted for.
func RandomCopies(t *testing.T, tg Target) {
	for seed := uint64(1); seed <= randomSeeds(); seed++ {
		sp := randomCopySpec(rand.New(rand.NewPCG(seed, 4242)))
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { randomCopy(t, tg, sp, seed, nil) })
	}
}

// ChaosCopies runs specs like RandomCopies' through Chaos: the same results
// must come out of completions out of order, -EAGAIN, short transfers and
// fallocate refused.
func ChaosCopies(t *testing.T, tg Target) {
	for seed := uint64(1); seed <= randomSeeds(); seed++ {
		sp := randomCopySpec(rand.New(rand.NewPCG(seed, 4343)))
		c := &Chaos{Seed: seed, NoFallocate: seed%5 == 0}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { randomCopy(t, tg, sp, seed, c) })
	}
}

// StoppedCopies cancels specs like RandomCopies' after a random number of
// completions, under Chaos. A stopped copy must say how far it got, and
// DST must hold what it says: the old bytes outside the range, SRC's bytes
// in the first Contiguous bytes of the range, and a file the copy owns cut
// to exactly that prefix.
func StoppedCopies(t *testing.T, tg Target) {
	for seed := uint64(1); seed <= randomSeeds(); seed++ {
		rng := rand.New(rand.NewPCG(seed, 4444))
		sp := randomCopySpec(rng)
		c := &Chaos{Seed: seed, NoFallocate: seed%5 == 0, CancelAfter: rng.IntN(12)}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { randomCopy(t, tg, sp, seed, c) })
	}
}

func randomCopySpec(rng *rand.Rand) randomSpec {
	sp := randomSpec{pieces: RandomLayout(rng), direct: rng.IntN(2) == 0}
	size := int64(0)
	for _, p := range sp.pieces {
		size += p.n
	}
	// Offsets: O_DIRECT needs them aligned (4096 covers every filesystem
	// here); buffered copies take any.
	unit := int64(1)
	if sp.direct {
		unit = 4096
	}
	pick := func(limit int64) int64 {
		if limit <= 0 {
			return 0
		}
		switch rng.IntN(3) {
		case 0:
			return 0
		case 1:
			return rng.Int64N(limit+1) / unit * unit
		}
		return rng.Int64N(limit/65536+1) * 65536 / unit * unit
	}
	sp.srcOff = pick(size)
	sp.length = size - sp.srcOff
	if rng.IntN(2) == 0 {
		sp.length = rng.Int64N(sp.length + 1)
	}
	sp.dst = []string{"new", "truncated", "range", "zeroed"}[rng.IntN(4)]
	if sp.dst != "truncated" {
		sp.dstOff = pick(1 << 20)
	}
	if sp.dst == "range" || sp.dst == "zeroed" || sp.dst == "truncated" {
		sp.oldSize = rng.Int64N(sp.dstOff + sp.length + 200_000)
	}
	sp.bs = []int{4096, 8192, 65536, 131072}[rng.IntN(4)]
	sp.depth = rng.IntN(6) + 1
	sp.zeroBlock = []int{0, 4096, 8192, 65536}[rng.IntN(4)]
	sp.holeAlign = []int{0, 512, 4096}[rng.IntN(3)]
	sp.mapHoles = rng.IntN(4) != 0
	sp.prealloc = rng.IntN(2) == 0
	return sp
}

// FailedCopies fails one random request of specs like RandomCopies' with
// EIO, under Chaos. The error must name that request's op, file and offset
// and unwrap to EIO, and DST must hold what the stats claim, as after a
// stop.
func FailedCopies(t *testing.T, tg Target) {
	for seed := uint64(1); seed <= randomSeeds(); seed++ {
		rng := rand.New(rand.NewPCG(seed, 4545))
		sp := randomCopySpec(rng)
		c := &Chaos{Seed: seed, NoFallocate: seed%5 == 0, FailAt: rng.IntN(10) + 1, Failed: new(engine.Request)}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { randomCopy(t, tg, sp, seed, c) })
	}
}

// BackendFailures runs specs like RandomCopies' through a backend whose
// Reap fails once, with requests in flight, after a random number of
// calls. The engine must drain before Run returns (the backend is closed
// with nothing outstanding), fail with that error, not report the copy
// undrained, and leave DST as a stopped copy: the old bytes outside the
// range, SRC's bytes in the prefix, a file it owns cut to the prefix.
func BackendFailures(t *testing.T, tg Target) {
	for seed := uint64(1); seed <= randomSeeds(); seed++ {
		rng := rand.New(rand.NewPCG(seed, 4646))
		sp := randomCopySpec(rng)
		c := &Chaos{Seed: seed, ReapFailAt: rng.IntN(6) + 1, Outstanding: new(int)}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { randomCopy(t, tg, sp, seed, c) })
	}
}

func randomCopy(t *testing.T, tg Target, sp randomSpec, seed uint64, chaos *Chaos) {
	dir := t.TempDir()
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	src := MakeSparse(t, srcPath, sp.pieces, seed)
	var old []byte
	switch sp.dst {
	case "range", "truncated":
		old = RandomBytes(sp.oldSize, seed+7)
	case "zeroed":
		old = make([]byte, sp.oldSize)
	}
	if sp.dst != "new" {
		writeFile(t, dstPath, old)
	}
	if sp.dst == "truncated" {
		if err := os.Truncate(dstPath, 0); err != nil {
			t.Fatal(err)
		}
		old = nil
	}
	job, cleanup := NewJob(t, srcPath, dstPath, sp.direct, sp.bs, sp.depth)
	defer cleanup()
	end := sp.dstOff + sp.length
	job.SrcOff, job.DstOff, job.Length = sp.srcOff, sp.dstOff, sp.length
	job.Preallocate, job.MapHoles = sp.prealloc, sp.mapHoles
	job.ZeroBlock, job.HoleAlign = sp.zeroBlock, sp.holeAlign
	if job.ZeroBlock%job.DstAlign != 0 {
		job.ZeroBlock = 0
	}
	owned := sp.dst == "new" || sp.dst == "truncated"
	job.DstZeroed = owned || sp.dst == "zeroed"
	job.CutBackOnStop = owned
	if owned || end > int64(len(old)) {
		job.FinalSize = end
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopping := chaos != nil && chaos.CancelAfter > 0
	if chaos != nil {
		c := *chaos
		c.MinShort = max(job.SrcAlign, job.DstAlign)
		if stopping {
			c.Cancel = cancel
		}
		tg.New = c.Wrap(tg.New)
	}
	tg.serve(t, &job)
	st, err := engine.Run(ctx, job, tg.New)
	got, rerr := os.ReadFile(dstPath)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if stopping && err != nil {
		checkCanceled(t, sp, st, err)
		checkStopped(t, sp, st, old, src, got, owned)
		return
	}
	if chaos != nil && chaos.Outstanding != nil && err != nil {
		checkDrained(t, sp, st, err, *chaos.Outstanding)
		checkStopped(t, sp, st, old, src, got, owned)
		return
	}
	if chaos != nil && chaos.Failed != nil && chaos.Failed.Op != 0 {
		checkFailed(t, sp, job, *chaos.Failed, err)
		checkStopped(t, sp, st, old, src, got, owned)
		return
	}
	if err != nil {
		t.Fatalf("%v: %v", sp, err)
	}
	want := expected(old, src[sp.srcOff:sp.srcOff+sp.length], sp.dstOff, owned)
	if len(got) != len(want) || firstDiff(got, want) >= 0 {
		t.Logf("%v", sp)
		Compare(t, got, want)
	}
	if sum := st.BytesWritten + st.BytesHoles + st.BytesZeroed; sum != sp.length || st.Contiguous != sp.length || !st.Synced {
		t.Fatalf("%v: written %d + holes %d + zeroed %d = %d, contiguous %d, synced %v: want %d, all synced",
			sp, st.BytesWritten, st.BytesHoles, st.BytesZeroed, sum, st.Contiguous, st.Synced, sp.length)
	}
}

// randomSeeds is how many copies each randomized test makes: 40 keeps the
// suite fast; RINGCP_RANDOM_SEEDS=2000 hunts longer. Read in the test, not
// in init, so that go test's cache sees the variable.
func randomSeeds() uint64 {
	n := uint64(40)
	if s := os.Getenv("RINGCP_RANDOM_SEEDS"); s != "" {
		fmt.Sscan(s, &n)
	}
	return n
}

func checkDrained(t *testing.T, sp randomSpec, st engine.Stats, err error, outstanding int) {
	t.Helper()
	if !errors.Is(err, ErrReapFailed) || errors.Is(err, engine.ErrUndrained) {
		t.Fatalf("%v: err = %v, want the backend's error, drained", sp, err)
	}
	if outstanding != 0 || st.InFlight != 0 {
		t.Fatalf("%v: %d requests outstanding when the backend was closed, %d in flight per stats: want none", sp, outstanding, st.InFlight)
	}
}

func checkCanceled(t *testing.T, sp randomSpec, st engine.Stats, err error) {
	t.Helper()
	var ce *engine.CanceledError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Fatalf("%v: err = %v, want a CanceledError", sp, err)
	}
	if ce.Contiguous != st.Contiguous || ce.Written != st.BytesWritten || !ce.Synced || st.Contiguous > sp.length {
		t.Fatalf("%v: error %+v, stats %+v: want the same counts, synced, within the range", sp, ce, st)
	}
}

// checkFailed checks that err names the request that failed.
func checkFailed(t *testing.T, sp randomSpec, job engine.Job, q engine.Request, err error) {
	t.Helper()
	var oe *engine.OpError
	if !errors.As(err, &oe) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("%v: err = %v, want an OpError wrapping EIO for %+v", sp, err, q)
	}
	op := q.Op.String()
	switch {
	case job.Ends[q.File] != nil:
		op = job.OpName(q) // the end's own name for it
	case q.Op == engine.OpFallocate && q.Mode&unix.FALLOC_FL_PUNCH_HOLE != 0:
		op = "fallocate(PUNCH_HOLE)"
	case q.Op == engine.OpFallocate:
		op = "fallocate(ZERO_RANGE)"
	}
	off := q.Off
	if q.Op == engine.OpSync {
		off = sp.dstOff
	}
	if oe.Op != op || oe.Path != EndName(job, q.File) || oe.Offset != off {
		t.Fatalf("%v: error %q, want %s %s at offset %d", sp, err, op, EndName(job, q.File), off)
	}
}

// checkStopped checks DST after a stopped copy against what the stats
// claim.
func checkStopped(t *testing.T, sp randomSpec, st engine.Stats, old, src, got []byte, owned bool) {
	t.Helper()
	if st.Contiguous > sp.length {
		t.Fatalf("%v: contiguous %d of %d", sp, st.Contiguous, sp.length)
	}
	done := src[sp.srcOff : sp.srcOff+st.Contiguous]
	if owned {
		// Cut to the prefix: exactly the first Contiguous bytes, as if the
		// copy had been that long.
		Compare(t, got, expected(nil, done, sp.dstOff, true))
		return
	}
	// Old bytes outside the range; the complete prefix inside it; the rest
	// of the range may hold anything.
	end := sp.dstOff + sp.length
	want := expected(old, done, sp.dstOff, false)
	if int64(len(got)) > max(int64(len(old)), end) {
		t.Fatalf("%v: DST is %d bytes after a stop (old %d, range end %d, contiguous %d)", sp, len(got), len(old), end, st.Contiguous)
	}
	prefixEnd := sp.dstOff + st.Contiguous
	if n := int64(len(got)); n < prefixEnd {
		// A stopped copy leaves a file it does not own at the size it
		// had or the writes gave it: a prefix that ends in holes or zero
		// runs (skipped, or punched with KEEP_SIZE) past the old end is
		// not there yet. Resuming sets the final size, so those bytes must
		// be zeros.
		if !isZeros(want[n:prefixEnd]) {
			t.Fatalf("%v: DST is %d bytes, the prefix ends at %d with data", sp, n, prefixEnd)
		}
		prefixEnd = n
	}
	Compare(t, got[:prefixEnd], want[:prefixEnd])
	if int64(len(got)) > end && int64(len(old)) > end {
		Compare(t, got[end:], old[end:])
	}
}
