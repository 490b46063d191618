package extents

import "iter"

// Intersect is the part of l within [off, end).
func (l List) Intersect(off, end int64) List {
	var out List
	for i := l.search(off); i < len(l) && l[i].Off < end; i++ {
		s, t := max(l[i].Off, off), min(l[i].End(), end)
		if t > s {
			out = append(out, Range{Off: s, Len: t - s})
		}
	}
	return out
}

// Gaps is the complement of l within [off, end): the bytes there that l
// does not hold.
func (l List) Gaps(off, end int64) List {
	var out List
	pos := off
	for _, r := range l.Intersect(off, end) {
		if r.Off > pos {
			out = append(out, Range{Off: pos, Len: r.Off - pos})
		}
		pos = r.End()
	}
	if pos < end {
		out = append(out, Range{Off: pos, Len: end - pos})
	}
	return out
}

// Union is every byte of a or b.
func Union(a, b List) List {
	return Merge(append(append([]Range(nil), a...), b...))
}

// AlignOut widens every range to whole granules (its start rounded down
// to a multiple of granule, its end up), clips it at limit (an end of
// the copy, which need not be a multiple), and merges what now touches.
// It is how a list meets O_DIRECT's alignment or a dirty bitmap's
// granularity: a copy of the result holds every byte of l. granule must
// be positive.
func (l List) AlignOut(granule, limit int64) List {
	out := make([]Range, 0, len(l))
	for _, r := range l {
		s := r.Off - r.Off%granule
		t := r.End()
		if rem := t % granule; rem != 0 {
			// Up to the granule, but not past limit (nor overflowing).
			if up := granule - rem; t <= limit-up {
				t += up
			} else {
				t = limit
			}
		}
		t = min(t, limit)
		if t > s {
			out = append(out, Range{Off: s, Len: t - s})
		}
	}
	return Merge(out)
}

// Chunks yields l cut into pieces of at most block bytes, in order. A
// piece never crosses a multiple of block, as the engine's chunks do not
// (Job.Grid): a range aligned to the alignment of both ends gives pieces
// aligned to it too, and a block-aligned range gives whole blocks.
// block must be positive.
func (l List) Chunks(block int64) iter.Seq[Range] {
	return func(yield func(Range) bool) {
		for _, r := range l {
			for pos := r.Off; pos < r.End(); {
				next := r.End()
				if room := block - pos%block; room < next-pos {
					next = pos + room
				}
				if !yield(Range{Off: pos, Len: next - pos}) {
					return
				}
				pos = next
			}
		}
	}
}
