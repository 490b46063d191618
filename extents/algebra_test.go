package extents

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The algebra is checked against a model: a set of bytes as a []bool
// over a small universe, where every operation is obvious.

const universe = 300

// model is the set of bytes ranges cover.
func model(ranges []Range) []bool {
	m := make([]bool, universe)
	for _, r := range ranges {
		for i := r.Off; i < r.End(); i++ {
			m[i] = true
		}
	}
	return m
}

// fromModel is the normal form of a model, built byte by byte.
func fromModel(m []bool) List {
	var out List
	for i, in := range m {
		if !in {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].End() == int64(i) {
			out[k].Len++
		} else {
			out = append(out, Range{int64(i), 1})
		}
	}
	return out
}

// randomRanges are up to 12 ranges inside the universe, some empty,
// some overlapping or touching.
func randomRanges(r *rand.Rand) []Range {
	out := make([]Range, r.IntN(13))
	for i := range out {
		off := r.Int64N(universe)
		out[i] = Range{off, r.Int64N(universe - off + 1)}
		if r.IntN(4) == 0 {
			out[i].Len = min(r.Int64N(3), universe-off)
		}
	}
	return out
}

func TestAlgebraAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	for range 3000 {
		a, b := randomRanges(r), randomRanges(r)
		la, lb := Merge(a), Merge(b)
		ma, mb := model(a), model(b)
		if err := la.Valid(); err != nil {
			t.Fatalf("Merge(%v) = %v: %v", a, la, err)
		}
		if want := fromModel(ma); !slices.Equal(la, want) {
			t.Fatalf("Merge(%v) = %v, want %v", a, la, want)
		}
		if !slices.Equal(Merge(la), la) {
			t.Fatalf("Merge is not idempotent on %v", la)
		}
		var n int64
		for i, in := range ma {
			if la.Contains(int64(i)) != in {
				t.Fatalf("%v.Contains(%d) = %v", la, i, !in)
			}
			if in {
				n++
			}
		}
		if la.Total() != n {
			t.Fatalf("%v.Total() = %d, want %d", la, la.Total(), n)
		}
		union := make([]bool, universe)
		for i := range union {
			union[i] = ma[i] || mb[i]
		}
		if got, want := Union(la, lb), fromModel(union); !slices.Equal(got, want) {
			t.Fatalf("Union(%v, %v) = %v, want %v", la, lb, got, want)
		}
		off := r.Int64N(universe)
		end := off + r.Int64N(universe-off+1)
		checkWindow(t, la, ma, off, end)
		g, limit := []int64{1, 2, 7, 16, 64}[r.IntN(5)], r.Int64N(universe+1)
		checkAlignOut(t, la, ma, g, limit)
		checkChunks(t, la, []int64{1, 3, 16, 100}[r.IntN(4)])
	}
}

func checkWindow(t *testing.T, l List, m []bool, off, end int64) {
	t.Helper()
	in, out := make([]bool, universe), make([]bool, universe)
	for i := off; i < end; i++ {
		in[i], out[i] = m[i], !m[i]
	}
	if got, want := l.Intersect(off, end), fromModel(in); !slices.Equal(got, want) {
		t.Fatalf("%v.Intersect(%d, %d) = %v, want %v", l, off, end, got, want)
	}
	if got, want := l.Gaps(off, end), fromModel(out); !slices.Equal(got, want) {
		t.Fatalf("%v.Gaps(%d, %d) = %v, want %v", l, off, end, got, want)
	}
}

// checkAlignOut: every granule touched by l, whole, clipped at limit.
func checkAlignOut(t *testing.T, l List, m []bool, g, limit int64) {
	t.Helper()
	want := make([]bool, universe)
	for i := range int64(universe) {
		if !m[i] {
			continue
		}
		for k := i - i%g; k < min(i-i%g+g, limit); k++ {
			want[k] = true
		}
	}
	if got := l.AlignOut(g, limit); !slices.Equal(got, fromModel(want)) {
		t.Fatalf("%v.AlignOut(%d, %d) = %v, want %v", l, g, limit, got, fromModel(want))
	}
}

// checkChunks: the pieces cover l exactly, in order, none longer than
// block nor crossing a multiple of it.
func checkChunks(t *testing.T, l List, block int64) {
	t.Helper()
	var pieces []Range
	for c := range l.Chunks(block) {
		if c.Len <= 0 || c.Len > block || c.Off/block != (c.End()-1)/block {
			t.Fatalf("%v.Chunks(%d): piece %v", l, block, c)
		}
		if k := len(pieces) - 1; k >= 0 && c.Off < pieces[k].End() {
			t.Fatalf("%v.Chunks(%d): piece %v after %v", l, block, c, pieces[k])
		}
		pieces = append(pieces, c)
	}
	if got := Merge(pieces); !slices.Equal(got, l) {
		t.Fatalf("%v.Chunks(%d) cover %v", l, block, got)
	}
	for range l.Chunks(block) {
		break // stopping early must not panic
	}
}

func TestAlgebraEdges(t *testing.T) {
	const max = 1<<63 - 1
	l := List{{max - 10, 10}}
	if got := l.AlignOut(1<<20, max); !slices.Equal(got, List{{max - 10 - (max-10)%(1<<20), 10 + (max-10)%(1<<20)}}) {
		t.Fatalf("AlignOut near MaxInt64: %v", got)
	}
	var n int
	for c := range l.Chunks(1 << 30) {
		if c.End() != max {
			t.Fatalf("chunk near MaxInt64: %v", c)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d chunks", n)
	}
	if err := (List{{0, 1}, {1, 1}}).Valid(); err == nil {
		t.Fatal("touching ranges passed Valid")
	}
	if err := (List{{5, 1}, {0, 1}}).Valid(); err == nil {
		t.Fatal("unsorted ranges passed Valid")
	}
	if got := (List{{0, 4097}}).AlignOut(4096, 4097); !slices.Equal(got, List{{0, 4097}}) {
		t.Fatalf("odd end: %v", got)
	}
	if got := (List(nil)).Gaps(3, 9); !slices.Equal(got, List{{3, 6}}) {
		t.Fatalf("gaps of nothing: %v", got)
	}
}
