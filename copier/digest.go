package copier

import (
	"bytes"
	"fmt"
	"hash/maphash"

	"github.com/ringcp/ringcp/engine"
)

// digests are what a copy read from SRC, one 64-bit hash per cell, for the
// read-back verification (Options.Verify) to compare DST with.
//
// The hash is hash/maphash (the runtime's AES-based memhash on x86-64 and
// arm64), seeded at random per process: 13 GB/s on one core here, ten
// times what a disk moves, so it runs on the engine's thread; 64 bits, so
// a corrupted cell goes unnoticed with probability 2^-64. It is no
// cryptographic proof against someone who crafts data for it (no one
// here can: the seed never leaves the process), and it is not kept across
// runs (a resumed copy compares what an earlier run copied with SRC
// itself). CRC32C would be faster still with SSE 4.2, but 32 bits lets one
// corrupted cell in four billion through.
//
// A cell's entry is its hash XOR the hash of as many zero bytes: a cell of
// zeros, a hole, and a cell never seen are all 0 and take no room.
type digests struct {
	seed     maphash.Seed
	length   int64
	table    cellTable
	zeroFull uint64
	zeroLast uint64
	// err: a chunk was not a whole cell (a bug); nothing can be verified.
	err error
}

func newDigests(length int64) *digests {
	d := &digests{seed: maphash.MakeSeed(), length: length}
	d.zeroFull = d.zeroHash(CellSize)
	d.zeroLast = d.zeroHash(d.cellLen(cells(length) - 1))
	return d
}

// cellLen is the length of cell i: CellSize, or less for the last one.
func (d *digests) cellLen(i int64) int64 { return max(0, min(CellSize, d.length-i*CellSize)) }

// zeroHash is the hash of n zero bytes. maphash gives the same result
// however the input is split, so the zeros need no buffer of n bytes.
func (d *digests) zeroHash(n int64) uint64 {
	var h maphash.Hash
	h.SetSeed(d.seed)
	var zeros [64 << 10]byte
	for ; n > 0; n -= int64(len(zeros)) {
		h.Write(zeros[:min(n, int64(len(zeros)))])
	}
	return h.Sum64()
}

// entry is what the table holds for cell i with these bytes.
func (d *digests) entry(i int64, b []byte) uint64 {
	zero := d.zeroFull
	if int64(len(b)) != CellSize {
		zero = d.zeroLast
	}
	return maphash.Bytes(d.seed, b) ^ zero
}

// Data records the cells of a chunk as read from SRC (engine.Observer).
func (d *digests) Data(rel int64, data []byte) {
	d.each(rel, data, func(i int64, b []byte) { d.table.set(i, d.entry(i, b)) })
}

// each calls fn for every cell of a chunk at rel, which must cover whole
// cells.
func (d *digests) each(rel int64, data []byte, fn func(i int64, b []byte)) {
	for len(data) > 0 {
		i := rel / CellSize
		n := d.cellLen(i)
		if rel%CellSize != 0 || int64(len(data)) < n {
			if d.err == nil {
				d.err = fmt.Errorf("verify: chunk %d+%d is not a whole number of %d-byte cells", rel, len(data), CellSize)
			}
			return
		}
		fn(i, data[:n])
		rel, data = rel+n, data[n:]
	}
}

// Hole: a hole's cells are zeros, which the table holds as nothing.
func (d *digests) Hole(rel, n int64) {}

// Durable is not a digest's business.
func (d *digests) Durable(n int64) {}

// badCells counts the cells a read pass found different, once each, and
// the first of them.
type badCells struct {
	seen  cellTable
	count int64
	first int64 // cell index, -1 while none
}

func newBadCells() *badCells { return &badCells{first: -1} }

func (b *badCells) mark(i int64) {
	if b.seen.get(i) != 0 {
		return
	}
	b.seen.set(i, 1)
	b.count++
	if b.first < 0 || i < b.first {
		b.first = i
	}
}

// verifier is the read-back of DST after the barrier (a read pass over
// DST alone): each cell's hash must be the digest taken from SRC; a hole
// in DST must be where SRC had zeros.
type verifier struct {
	want     *digests
	from     int64 // range offset where the pass starts
	bad      *badCells
	progress *engine.Progress
}

func (v *verifier) check(rel int64, data, _ []byte) error {
	v.want.each(v.from+rel, data, func(i int64, b []byte) {
		if v.want.entry(i, b) != v.want.table.get(i) {
			v.bad.mark(i)
		}
	})
	v.progress.Verified.Add(int64(len(data)))
	return v.want.err
}

// Hole is a hole in DST: every cell in it must have been zeros in SRC.
func (v *verifier) Hole(rel, n int64) {
	rel += v.from
	v.want.table.nonZero(rel/CellSize, cells(rel+n), v.bad.mark)
	v.progress.Verified.Add(n)
}

func (v *verifier) Data(int64, []byte) {}
func (v *verifier) Durable(int64)      {}

// comparer is a read pass over SRC and DST side by side: it finds the
// first byte that differs and counts the cells that do.
type comparer struct {
	from     int64 // range offset where the pass starts
	first    int64 // first differing byte from the range start, -1 while none
	bad      *badCells
	progress *engine.Progress
}

// newComparer starts a compare; progress may be nil.
func newComparer(from int64, progress *engine.Progress) *comparer {
	if progress == nil {
		progress = &engine.Progress{}
	}
	return &comparer{from: from, first: -1, bad: newBadCells(), progress: progress}
}

func (c *comparer) check(rel int64, src, dst []byte) error {
	c.progress.Verified.Add(int64(len(src)))
	rel += c.from
	for len(src) > 0 {
		n := min(int64(len(src)), CellSize-rel%CellSize) // up to the next cell line
		if i := firstDiff(src[:n], dst[:n]); i >= 0 {
			c.bad.mark(rel / CellSize)
			if c.first < 0 || rel+int64(i) < c.first {
				c.first = rel + int64(i)
			}
		}
		rel, src, dst = rel+n, src[n:], dst[n:]
	}
	return nil
}

// firstDiff is the index of the first byte where a and b (of one length)
// differ, or -1. bytes.Equal (vectorized) answers the common case.
func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	const step = 4096
	for off := 0; off < len(a); off += step {
		end := min(off+step, len(a))
		if bytes.Equal(a[off:end], b[off:end]) {
			continue
		}
		for i := off; i < end; i++ {
			if a[i] != b[i] {
				return i
			}
		}
	}
	return -1
}
