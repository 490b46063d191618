package extents

import (
	"fmt"
	"io"
)

// RangeError is a range that does not fit in an end of the copy.
type RangeError struct {
	Entry
	End  string // "SRC" or "DST"
	Size int64  // that end's size
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("extent list, %s: range %d+%d ends at %d, past the end of %s (%d bytes)",
		e.where(), e.Off, e.Len, e.Range.End(), e.End, e.Size)
}

// Check refuses the first entry (in input order) that reaches past SRC's
// size or DST's (SRC offset equals DST offset); an empty range's offset
// must still lie within both. A negative size skips that end (an end
// whose size is not known yet, such as a new DST file).
func Check(entries []Entry, srcSize, dstSize int64) error {
	for _, e := range entries {
		for _, end := range []struct {
			name string
			size int64
		}{{"SRC", srcSize}, {"DST", dstSize}} {
			if end.size >= 0 && e.Range.End() > end.size {
				return &RangeError{Entry: e, End: end.name, Size: end.size}
			}
		}
	}
	return nil
}

// Ranges are the entries' ranges, for Merge.
func Ranges(entries []Entry) []Range {
	out := make([]Range, len(entries))
	for i, e := range entries {
		out[i] = e.Range
	}
	return out
}

// Read parses a list, checks it against both ends' sizes, and merges it:
// what --extents FILE needs before the first write.
func Read(r io.Reader, srcSize, dstSize int64) (List, error) {
	entries, err := Parse(r)
	if err != nil {
		return nil, err
	}
	if err := Check(entries, srcSize, dstSize); err != nil {
		return nil, err
	}
	return Merge(Ranges(entries)), nil
}
