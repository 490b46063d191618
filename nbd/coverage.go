package nbd

import "sort"

// coverage records which bytes of a read the server's chunks described,
// so a reply that overlaps itself, or ends before every byte came, is
// caught instead of returning stale buffer bytes as data. Chunks usually
// arrive in order and merge into one span, so this stays small.
type coverage struct {
	spans [][2]uint64 // sorted, disjoint, non-adjacent [start, end)
	total uint64
}

// add records [off, off+n); it reports false when that overlaps bytes
// already described.
func (c *coverage) add(off, n uint64) bool {
	if n == 0 {
		return true
	}
	end := off + n
	// The first span ending after off overlaps unless it starts at or
	// after end.
	k := sort.Search(len(c.spans), func(i int) bool { return c.spans[i][1] > off })
	if k < len(c.spans) && c.spans[k][0] < end {
		return false
	}
	// spans[i] is the first that ends at or after off: it touches off
	// from the left when it ends exactly there.
	i := sort.Search(len(c.spans), func(i int) bool { return c.spans[i][1] >= off })
	c.total += n
	mergeLeft := i < len(c.spans) && c.spans[i][1] == off
	j := i
	if mergeLeft {
		j = i + 1
	}
	mergeRight := j < len(c.spans) && c.spans[j][0] == end
	switch {
	case mergeLeft && mergeRight:
		c.spans[i][1] = c.spans[j][1]
		c.spans = append(c.spans[:j], c.spans[j+1:]...)
	case mergeLeft:
		c.spans[i][1] = end
	case mergeRight:
		c.spans[j][0] = off
	default:
		c.spans = append(c.spans, [2]uint64{})
		copy(c.spans[i+1:], c.spans[i:])
		c.spans[i] = [2]uint64{off, end}
	}
	return true
}
