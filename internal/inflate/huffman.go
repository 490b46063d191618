package inflate

import "math/bits"

// A table entry, one uint32:
//
//	bits 0-7    bits the entry consumes: the code's (or, in a sub-table,
//	            its rest past the primary bits) plus its extra bits
//	bits 8-11   the code's bits alone, where the extra bits start; for a
//	            sub-table pointer, the sub-table's index bits
//	bits 12-15  flags
//	bits 16-31  a literal byte, a length or distance base, a code-length
//	            symbol, or a sub-table's start
//
// Packing the base and the extra-bit count lets the hot loop turn an
// entry into a length or distance with no second lookup.
const (
	flagLiteral = 1 << 12
	flagEnd     = 1 << 13 // end of block
	flagSub     = 1 << 14 // sub-table pointer
	flagBad     = 1 << 15 // a code no valid stream uses

	maxCodeLen = 15
)

// Table sizes: the primary table, then room for every sub-table a valid
// code can need. These are zlib's "enough" figures (enough 288 11 15,
// enough 32 8 15, enough 19 7 7), which hold for the way build sizes its
// sub-tables (zlib's).
const (
	litBits   = 11
	distBits  = 8
	preBits   = 7
	litSize   = 2342
	distSize  = 402
	preSize   = 1 << preBits
	litMask   = 1<<litBits - 1
	distMask  = 1<<distBits - 1
	preMask   = 1<<preBits - 1
	maxLitSym = 288
)

// build fills table for the code whose lengths (0: unused) are lens,
// symbol s's entry being tmpl[s] plus its code's length. It accepts what
// zlib does: a complete code, no code at all, or (lone) a single code of
// one bit; the bit patterns left without a code take missing, which
// consumes one bit as zlib's do (so that reading on past a full output,
// Decode stops for a missing bit exactly where zlib does).
func build(table []uint32, tableBits uint, lens []uint8, tmpl []uint32, missing uint32, lone bool) error {
	var count [maxCodeLen + 1]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	left, codes := 1, 0
	for l := 1; l <= maxCodeLen; l++ {
		left = left<<1 - count[l]
		codes += count[l]
		if left < 0 {
			return errTree
		}
	}
	if left > 0 {
		if codes > 1 || codes == 1 && (count[1] != 1 || !lone) {
			return errTree
		}
		for i := range 1 << tableBits {
			table[i] = missing
		}
	}
	var sorted [maxLitSym]uint16
	var start [maxCodeLen + 2]int
	for l := 1; l <= maxCodeLen; l++ {
		start[l+1] = start[l] + count[l]
	}
	for s, l := range lens {
		if l != 0 {
			sorted[start[l]] = uint16(s)
			start[l]++
		}
	}
	return fill(table, tableBits, lens, tmpl, sorted[:codes], &count)
}

// fill places the codes, given their symbols in canonical order (by
// length, then symbol) and how many there are of each length.
func fill(table []uint32, tableBits uint, lens []uint8, tmpl []uint32, sorted []uint16, count *[maxCodeLen + 1]int) error {
	code, codeLen := 0, uint(0) // canonical code, first bit highest
	prefix, sub, next := -1, 0, 1<<tableBits
	subBits := uint(0)
	for _, s := range sorted {
		l := uint(lens[s])
		code <<= l - codeLen
		codeLen = l
		rev := int(bits.Reverse16(uint16(code)) >> (16 - l)) // as the stream sends it
		code++
		if l <= tableBits {
			e := tmpl[s] + uint32(l) + uint32(l)<<8
			for i := rev; i < 1<<tableBits; i += 1 << l {
				table[i] = e
			}
			count[l]--
			continue
		}
		if p := rev & (1<<tableBits - 1); p != prefix {
			prefix, sub = p, next
			subBits = subTableBits(l-tableBits, tableBits, count)
			next += 1 << subBits
			if next > len(table) {
				return errTableFull
			}
			table[p] = uint32(sub)<<16 | flagSub | uint32(subBits)<<8 | uint32(tableBits)
		}
		rest := l - tableBits
		e := tmpl[s] + uint32(rest) + uint32(rest)<<8
		for i := rev >> tableBits; i < 1<<subBits; i += 1 << rest {
			table[sub+i] = e
		}
		count[l]--
	}
	return nil
}

// subTableBits sizes a sub-table as zlib does: from the first (shortest)
// code of its prefix, wide enough for the codes still to place that
// share the prefix, counting how many of each length remain.
func subTableBits(bitsPast, tableBits uint, count *[maxCodeLen + 1]int) uint {
	n := bitsPast
	left := 1 << n
	for n+tableBits < maxCodeLen {
		left -= count[n+tableBits]
		if left <= 0 {
			break
		}
		n++
		left <<= 1
	}
	return n
}
