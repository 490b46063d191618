// Package synctest makes the SRC and DST pairs that tests of a sync run
// on: the same disk before and after random changes (single bytes, whole
// granules, the first and last byte, the last partial granule), grown
// and shrunk, holes that became data and data that became zeros, at the
// awkward sizes (0, 1, 511, 4097, odd tails). It also says, from a model
// of its own (not the code under test), how many bytes a sync must write
// and zero, so that a test can assert the sync wrote no more.
package synctest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

// Case is one pair: SRC's content, and DST's before the sync. Holes are
// the ranges of DST written as holes (left unwritten in a sparse file).
type Case struct {
	Name  string
	Src   []byte
	Dst   []byte
	Holes [][2]int64 // [off, end) of DST left as holes
}

// Random returns n bytes of a seeded stream, never a whole zero granule.
func Random(seed uint64, n int64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32() | 1)
	}
	return b
}

// Cases are the pairs for granule g (a power of two, 512 or more).
func Cases(g int) []Case {
	G := int64(g)
	var out []Case
	add := func(name string, src, dst []byte) { out = append(out, Case{Name: name, Src: src, Dst: dst}) }
	for _, size := range []int64{0, 1, 511, 4097, G, G + 1, 3*G + 4097} {
		base := Random(uint64(size), size)
		add(fmt.Sprintf("same/%d", size), base, clone(base))
		if size > 0 {
			src := clone(base)
			src[0]++
			src[size-1]++
			add(fmt.Sprintf("first-and-last-byte/%d", size), src, clone(base))
		}
		add(fmt.Sprintf("from-empty/%d", size), base, nil)
		add(fmt.Sprintf("to-empty/%d", size), nil, base)
	}
	size := 40*G + 4097 // an odd tail in a partial last granule
	base := Random(7, size)
	edit := func(name string, f func(src []byte)) {
		src := clone(base)
		f(src)
		add(name, src, clone(base))
	}
	edit("random-bytes", func(src []byte) {
		r := rand.New(rand.NewPCG(1, 2))
		for range 9 {
			src[r.Int64N(size)] ^= 0x40
		}
	})
	edit("whole-granules", func(src []byte) {
		copy(src[3*G:], Random(3, G))
		copy(src[4*G:], Random(4, G)) // a neighbour: one run
		copy(src[20*G:], Random(20, G))
	})
	edit("granule-boundary", func(src []byte) { src[10*G-1]++; src[10*G]++ })
	edit("last-partial-granule", func(src []byte) { src[40*G+5]++ })
	edit("last-byte", func(src []byte) { src[size-1]++ })
	edit("data-became-zeros", func(src []byte) {
		clear(src[2*G : 6*G])
		clear(src[40*G:]) // the partial last granule too
		clear(src[9*G : 9*G+100])
	})
	grown := append(clone(base), Random(9, 5*G+3)...)
	grown[1]++
	add("grown", grown, clone(base))
	grownZeros := append(clone(base), make([]byte, 7*G+1)...)
	add("grown-by-zeros", grownZeros, clone(base))
	shrunk := clone(base[:17*G+511])
	shrunk[17*G+3]++
	add("shrunk", shrunk, clone(base))
	add("shrunk-to-granule", clone(base[:8*G]), clone(base))
	holed := clone(base)
	src := clone(base)
	clear(holed[5*G : 12*G])
	copy(src[7*G:], Random(77, 2*G+5)) // data where DST has a hole
	clear(src[6*G : 7*G])              // a hole that stays
	out = append(out, Case{Name: "holes-became-data", Src: src, Dst: holed, Holes: [][2]int64{{5 * G, 12 * G}}})
	return out
}

func clone(b []byte) []byte { return append([]byte{}, b...) }

// Expect is what a sync of c must do with granule g, from the model: the
// bytes written from SRC and zeroed, each a whole number of granules
// (the last one short), and the granules that differ.
func Expect(c Case, g int) (written, zeroed, granules int64) {
	for off := int64(0); off < int64(len(c.Src)); off += int64(g) {
		end := min(off+int64(g), int64(len(c.Src)))
		s, d := c.Src[off:end], make([]byte, end-off)
		if off < int64(len(c.Dst)) {
			copy(d, c.Dst[off:min(end, int64(len(c.Dst)))])
		}
		if bytes.Equal(s, d) {
			continue
		}
		granules++
		if bytes.Count(s, []byte{0}) == len(s) {
			zeroed += end - off
		} else {
			written += end - off
		}
	}
	return written, zeroed, granules
}

// WriteDst writes c's DST to path, leaving its holes unwritten (sparse).
func WriteDst(t testing.TB, path string, c Case) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(int64(len(c.Dst))); err != nil {
		t.Fatal(err)
	}
	pos := int64(0)
	for _, h := range append(c.Holes, [2]int64{int64(len(c.Dst)), int64(len(c.Dst))}) {
		if _, err := f.WriteAt(c.Dst[pos:h[0]], pos); err != nil {
			t.Fatal(err)
		}
		pos = h[1]
	}
}

// WriteFile writes b to path.
func WriteFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Same fails the test unless path holds exactly want.
func Same(t testing.TB, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	SameBytes(t, path, got, want)
}

// SameBytes fails the test unless got equals want, naming the first
// difference.
func SameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: first difference at byte %d: %#x, want %#x", what, i, got[i], want[i])
		}
	}
}
