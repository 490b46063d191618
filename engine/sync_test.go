package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
)

// TestCompareGranulesIsBlocksyncs: the engine's comparison finds the
// same runs as blocksync.Compare, the one definition a sync across hosts
// also follows.
func TestCompareGranulesIsBlocksyncs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 500 {
		g := 512 << rng.IntN(8)
		n := rng.IntN(8*g) + 1
		src, dst := make([]byte, n), make([]byte, n)
		for i := range src {
			if rng.IntN(3) > 0 {
				src[i] = byte(rng.IntN(2))
			}
		}
		copy(dst, src)
		for range rng.IntN(5) {
			at := rng.IntN(n)
			if rng.IntN(2) == 0 {
				dst[at] ^= 1
			} else {
				clear(src[at/g*g : min(at/g*g+g, n)])
			}
		}
		got := compareGranules(src, dst, g, nil)
		want := blocksync.Compare(0, src, dst, g, nil)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d runs, blocksync finds %d", round, len(got), len(want))
		}
		for i, c := range want {
			if got[i] != (change{off: int(c.Off), end: int(c.Off + c.Len), zero: c.Zero}) {
				t.Fatalf("round %d: run %d is %+v, blocksync's %+v", round, i, got[i], c)
			}
		}
	}
}
