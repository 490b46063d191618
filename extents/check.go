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
		if end, size := PastEnd(e.Range, srcSize, dstSize); end != "" {
			return &RangeError{Entry: e, End: end, Size: size}
		}
	}
	return nil
}

// PastEnd names the first end, "SRC" or "DST", that r reaches past, and
// its size; "" when r fits both. A negative size skips that end.
func PastEnd(r Range, srcSize, dstSize int64) (end string, size int64) {
	switch {
	case srcSize >= 0 && r.End() > srcSize:
		return "SRC", srcSize
	case dstSize >= 0 && r.End() > dstSize:
		return "DST", dstSize
	}
	return "", 0
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
