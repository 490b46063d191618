package copier

import (
	"bytes"
	"testing"

	"github.com/ringcp/ringcp/engine"
)

// TestDigestsAndVerifier: a range of three cells and a short one, seen by
// the copy as data, zeros and a hole, then read back in every way DST can
// differ: a changed byte, data where SRC had a hole, a hole where SRC had
// data, a cell of zeros where SRC had zeros (fine), a short last cell.
func TestDigestsAndVerifier(t *testing.T) {
	const length = 3*CellSize + 5000
	cell := func(i int64, fill byte) []byte {
		b := bytes.Repeat([]byte{fill}, int(min(CellSize, length-i*CellSize)))
		if fill != 0 {
			b[7] = byte(i) // cells differ from each other
		}
		return b
	}
	d := newDigests(length)
	d.Data(0, cell(0, 1))
	d.Data(CellSize, cell(1, 0)) // zeros read as data
	d.Hole(2*CellSize, CellSize) // a hole
	d.Data(3*CellSize, cell(3, 4))
	if d.err != nil {
		t.Fatal(d.err)
	}
	type readBack struct {
		name string
		run  func(v *verifier) error
		bad  []int64
	}
	changed := cell(3, 4)
	changed[4999] ^= 1
	cases := []readBack{
		{"same", func(v *verifier) error {
			return errs(v.check(0, cell(0, 1), nil), v.check(CellSize, cell(1, 0), nil), v.check(2*CellSize, cell(2, 0), nil), v.check(3*CellSize, cell(3, 4), nil))
		}, nil},
		{"holes for zeros", func(v *verifier) error {
			v.Hole(CellSize, 2*CellSize)
			return errs(v.check(0, cell(0, 1), nil), v.check(3*CellSize, cell(3, 4), nil))
		}, nil},
		{"changed byte in the short cell", func(v *verifier) error {
			return errs(v.check(0, cell(0, 1), nil), v.check(CellSize, cell(1, 0), nil), v.check(2*CellSize, cell(2, 0), nil), v.check(3*CellSize, changed, nil))
		}, []int64{3}},
		{"data where SRC had a hole, a hole where it had data", func(v *verifier) error {
			v.Hole(0, CellSize)
			return errs(v.check(CellSize, cell(1, 0), nil), v.check(2*CellSize, cell(2, 9), nil), v.check(3*CellSize, cell(3, 4), nil))
		}, []int64{0, 2}},
	}
	for _, c := range cases {
		v := &verifier{want: d, bad: newBadCells(), progress: &engine.Progress{}}
		if err := c.run(v); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v.bad.count != int64(len(c.bad)) || (len(c.bad) > 0 && v.bad.first != c.bad[0]) {
			t.Errorf("%s: %d bad cells, first %d; want %v", c.name, v.bad.count, v.bad.first, c.bad)
		}
		if got := v.progress.Verified.Load(); got != length {
			t.Errorf("%s: %d bytes verified, want %d", c.name, got, length)
		}
	}
	v := &verifier{want: d, bad: newBadCells(), progress: &engine.Progress{}}
	if err := v.check(4096, cell(0, 1)[:4096], nil); err == nil {
		t.Error("a piece of a cell was checked as if whole")
	}
}

func errs(list ...error) error {
	for _, err := range list {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestComparer: the first differing byte across chunks given out of
// order, and each differing cell counted once however many chunks it
// comes in.
func TestComparer(t *testing.T) {
	a := bytes.Repeat([]byte{1}, 3*CellSize)
	b := bytes.Clone(a)
	b[CellSize+100] = 0
	b[CellSize+CellSize/2+5] = 0
	b[2*CellSize+9] = 0
	c := newComparer(0, nil)
	half := CellSize / 2
	for _, off := range []int{2 * CellSize, CellSize + half, 0, CellSize, half, 2*CellSize + half} {
		if err := c.check(int64(off), a[off:off+half], b[off:off+half]); err != nil {
			t.Fatal(err)
		}
	}
	if c.first != CellSize+100 || c.bad.count != 2 || c.bad.first != 1 {
		t.Errorf("first %d, %d bad cells from %d; want %d, 2 from 1", c.first, c.bad.count, c.bad.first, CellSize+100)
	}
}

// TestCellTableNonZero visits set cells in a range, sparse or dense.
func TestCellTableNonZero(t *testing.T) {
	var tb cellTable
	set := []int64{0, 5, cellsPerPage - 1, cellsPerPage, 7 * cellsPerPage, 1 << 40}
	for _, i := range set {
		tb.set(i, uint64(i)+1)
	}
	tb.set(3, 0) // zero in a page: nothing
	for _, r := range [][2]int64{{0, 1 << 41}, {1, cellsPerPage + 1}, {6, 7*cellsPerPage + 1}} {
		var got int
		tb.nonZero(r[0], r[1], func(i int64) {
			if i < r[0] || i >= r[1] || tb.get(i) == 0 {
				t.Errorf("visited %d outside [%d,%d) or unset", i, r[0], r[1])
			}
			got++
		})
		want := 0
		for _, i := range set {
			if i >= r[0] && i < r[1] {
				want++
			}
		}
		if got != want {
			t.Errorf("[%d,%d): %d visited, want %d", r[0], r[1], got, want)
		}
	}
}
