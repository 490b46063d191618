package extents

import (
	"cmp"
	"fmt"
	"slices"
)

// Range is the bytes [Off, Off+Len).
type Range struct {
	Off int64
	Len int64
}

// End is the first byte past the range.
func (r Range) End() int64 { return r.Off + r.Len }

func (r Range) String() string { return fmt.Sprintf("[%d, %d)", r.Off, r.End()) }

// List is a set of bytes in normal form: ranges sorted by offset, none
// empty, no two overlapping or touching. Merge makes one; the operations
// on a List keep the form.
type List []Range

// Merge returns the normal form of ranges: sorted, overlapping and
// adjacent ranges joined, empty ones dropped. ranges is not changed. The
// ranges must not have negative offsets or lengths, nor end past
// math.MaxInt64 (Parse and Check guarantee it).
func Merge(ranges []Range) List {
	sorted := slices.Clone(ranges)
	slices.SortFunc(sorted, func(a, b Range) int { return cmp.Compare(a.Off, b.Off) })
	var out List
	for _, r := range sorted {
		if r.Len == 0 {
			continue
		}
		if k := len(out) - 1; k >= 0 && r.Off <= out[k].End() {
			out[k].Len = max(out[k].End(), r.End()) - out[k].Off
			continue
		}
		out = append(out, r)
	}
	return out
}

// Valid says whether l is in normal form, for lists built by hand.
func (l List) Valid() error {
	for i, r := range l {
		switch {
		case r.Off < 0 || r.Len <= 0 || r.End() < r.Off:
			return fmt.Errorf("extents: range %d %v is empty, negative or overflows", i, r)
		case i > 0 && r.Off <= l[i-1].End():
			return fmt.Errorf("extents: range %d %v does not start after range %d %v ends", i, r, i-1, l[i-1])
		}
	}
	return nil
}

// Total is the number of bytes in l.
func (l List) Total() int64 {
	var n int64
	for _, r := range l {
		n += r.Len
	}
	return n
}

// Contains says whether byte off is in l.
func (l List) Contains(off int64) bool {
	i := l.search(off)
	return i < len(l) && l[i].Off <= off
}

// search is the index of the first range that ends after off.
func (l List) search(off int64) int {
	i, _ := slices.BinarySearchFunc(l, off, func(r Range, off int64) int {
		if r.End() <= off {
			return -1
		}
		return 1
	})
	return i
}
