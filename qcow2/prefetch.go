package qcow2

// Prefetcher is a Transport on which every read costs a round trip (an
// HTTP or S3 object: one range request each). Open tells it the
// metadata it is about to read, one table after another, so that it can
// fetch them all at once, in parallel, and answer those reads from
// memory: the walk of an image's L2 tables then costs a round trip or
// two, not one per table. What it fetches and keeps is its own
// business (a budget, nothing at all); Open reads every table through
// ReadAt as before, so a Prefetcher that kept nothing only costs time.
type Prefetcher interface {
	Prefetch(ranges []Range)
}

// Range is a span of host bytes.
type Range struct{ Off, Len int64 }

// prefetch hands ranges to t when it is a Prefetcher.
func prefetch(t Transport, ranges ...Range) {
	if p, ok := t.(Prefetcher); ok && len(ranges) > 0 {
		p.Prefetch(ranges)
	}
}

// prefetchTables announces the L1 table and the refcount table, which
// Open reads next (the refcount table when it checks the metadata).
// The header bounded both to the file (parseHeader).
func (im *Image) prefetchTables() {
	h := im.h
	prefetch(im.t, Range{int64(h.L1TableOffset), im.l1Entries() * 8},
		Range{int64(h.RefTableOffset), int64(h.RefTableClusters) * im.cs})
}

// prefetchL2 announces the L2 tables the L1 table points to inside the
// file (the others are refused when they are met), in L1's order: the
// order a walk reads them in, which a Prefetcher with a budget keeps
// first.
func (im *Image) prefetchL2() {
	var ranges []Range
	for _, e := range im.l1 {
		off := int64(e & entryOffsetMask)
		if off != 0 && off%im.cs == 0 && off+im.cs <= im.fileSize {
			ranges = append(ranges, Range{off, im.cs})
		}
	}
	prefetch(im.t, ranges...)
}
