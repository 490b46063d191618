package inflate

import "sync"

// Length codes 257-285 and distance codes 0-29 (RFC 1951 3.2.5): base
// value and extra bits.
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// Entry templates per symbol (see huffman.go); build adds the code's
// length. Symbols 286 and 287, and distances 30 and 31, have codes in
// the fixed code but mean nothing.
var litTmpl, distTmpl, preTmpl = func() (lit [maxLitSym]uint32, dist [32]uint32, pre [19]uint32) {
	for s := range 256 {
		lit[s] = uint32(s)<<16 | flagLiteral
	}
	lit[256] = flagEnd
	for i := range lengthBase {
		lit[257+i] = uint32(lengthBase[i])<<16 | uint32(lengthExtra[i])
	}
	lit[286], lit[287] = flagBad, flagBad
	for i := range distBase {
		dist[i] = uint32(distBase[i])<<16 | uint32(distExtra[i])
	}
	dist[30], dist[31] = flagBad, flagBad
	for s := range pre {
		pre[s] = uint32(s) << 16
	}
	return
}()

// noCode is the entry for the bit patterns an incomplete literal/length
// or distance code leaves out: an error once its one bit is read.
const noCode = flagBad | 1 | 1<<8

// preOrder is the order of the code-length code's lengths in a dynamic
// block's header.
var preOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// tables are a block's literal/length and distance decoding tables.
type tables struct {
	lit  [litSize]uint32
	dist [distSize]uint32
}

// FixedLitLength is the length of literal/length symbol s (0 to 287) in
// deflate's fixed code (RFC 1951, 3.2.6); every distance code's is 5.
func FixedLitLength(s int) uint8 {
	switch {
	case s < 144:
		return 8
	case s < 256:
		return 9
	case s < 280:
		return 7
	}
	return 8
}

// fixedTables are the fixed code's (block type 1), built once.
var fixedTables = sync.OnceValue(func() *tables {
	var lens [maxLitSym + 32]uint8
	for s := range lens {
		lens[s] = 5 // the distance codes'
		if s < maxLitSym {
			lens[s] = FixedLitLength(s)
		}
	}
	t := new(tables)
	if build(t.lit[:], litBits, lens[:maxLitSym], litTmpl[:], noCode, true) != nil ||
		build(t.dist[:], distBits, lens[maxLitSym:], distTmpl[:], noCode, true) != nil {
		panic("inflate: the fixed code does not build")
	}
	return t
})
