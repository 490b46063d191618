package qcow2

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
)

// deflate32 is a raw deflate encoder for clusters of 32 KiB and less,
// made for size: Go's deflaters (the standard library's and klauspost's)
// look for matches of 4 bytes at least, and zlib, QEMU's deflate, for 3.
// Machine code is full of 3-byte matches: on the programs of /usr/bin at
// 4 KiB clusters zlib's level 6 found 1.5 times the matches klauspost's
// level 7 did, and its clusters were 2.8% smaller (its level 9, the
// standard library's level 9 no better). So it parses as zlib's
// deflate_slow does (lazy matching on hash chains of 3-byte prefixes,
// level 7's limits) and codes one block, dynamic or fixed, whichever is
// shorter, as zlib does with fewer than 32 Ki symbols (lit_bufsize at
// memLevel 9): every cluster of 32 KiB and less.
type deflate32 struct {
	head   [1 << dHashBits]int32
	prev   [1 << 15]int32
	tokens []uint32 // literal: the byte; match: 1<<31 | length<<16 | distance
	litF   [286]int32
	distF  [30]int32
	out    bitWriter
}

// The parse's limits are zlib's level 7 (its configuration_table): on
// the programs of /usr/bin at 4 KiB clusters they make the data 0.9989x
// zlib's level 6 at 29 MB/s of one core here; level 6's 0.9995x at 35
// MB/s, level 9's 0.9982x at 17 MB/s (qemu-img's zlib ran at 29 MB/s).
const (
	dHashBits = 13
	dMinMatch = 3
	dMaxMatch = 258
	dMaxChain = 256 // candidates followed on a chain
	dGood     = 8   // a match this long already: follow a quarter as many
	dNice     = 128 // a match this long ends the search
	dLazy     = 32  // a match this long is taken without looking one on
)

// deflateSmallMax is the largest cluster deflateSmall takes: one block
// of fewer than 32 Ki symbols, distances within deflate's 32 KiB.
const deflateSmallMax = 32 << 10

var deflaters32 = sync.Pool{New: func() any { return new(deflate32) }}

// deflateSmall compresses src (at most deflateSmallMax bytes) as one
// final raw deflate block, appended to dst.
func deflateSmall(dst, src []byte) []byte {
	e := deflaters32.Get().(*deflate32)
	defer deflaters32.Put(e)
	e.parse(src)
	e.out.b = dst
	e.writeBlock()
	out := e.out.flush()
	e.out.b = nil // the pool keeps no hold on the caller's buffer
	return out
}

// dHash is shifted as a uint32: an int of 32 bits would be negative for
// half the products.
func dHash(p []byte) int {
	return int((uint32(p[0])<<16 | uint32(p[1])<<8 | uint32(p[2])) * 0x9E3779B1 >> (32 - dHashBits))
}

func (e *deflate32) insert(src []byte, i int) {
	if i+dMinMatch <= len(src) {
		h := dHash(src[i:])
		e.prev[i] = e.head[h]
		e.head[h] = int32(i)
	}
}

// parse makes src's tokens, as zlib's deflate_slow: a match found at i is
// taken only when the match at i+1 is no longer.
func (e *deflate32) parse(src []byte) {
	for i := range e.head {
		e.head[i] = -1
	}
	e.tokens = e.tokens[:0]
	clear(e.litF[:])
	clear(e.distF[:])
	prevLen, prevDist, avail := 0, 0, false
	for i := 0; i < len(src); {
		curLen, curDist := 0, 0
		if i+dMinMatch <= len(src) {
			cand := e.head[dHash(src[i:])]
			e.insert(src, i)
			if cand >= 0 && prevLen < dLazy {
				curLen, curDist = e.longest(src, i, int(cand), prevLen)
			}
		}
		if prevLen >= dMinMatch && curLen <= prevLen {
			e.match(prevLen, prevDist)
			end := i - 1 + prevLen
			for j := i + 1; j < end; j++ {
				e.insert(src, j)
			}
			i, prevLen, avail = end, 0, false
			continue
		}
		if avail {
			e.literal(src[i-1])
		}
		prevLen, prevDist, avail = curLen, curDist, true
		i++
	}
	if avail {
		e.literal(src[len(src)-1])
	}
	e.litF[256] = 1 // the end of block
}

// longest is the longest match at i longer than atLeast (at least 3),
// following the chain from cand; 0 when there is none.
func (e *deflate32) longest(src []byte, i, cand, atLeast int) (int, int) {
	best := max(atLeast, dMinMatch-1)
	bestDist := 0
	limit := min(dMaxMatch, len(src)-i)
	if best >= limit {
		return 0, 0
	}
	chain := dMaxChain
	if atLeast >= dGood {
		chain >>= 2
	}
	cur := src[i : i+limit]
	for ; cand >= 0 && chain > 0; cand, chain = int(e.prev[cand]), chain-1 {
		c := src[cand:]
		if c[best] != cur[best] || c[0] != cur[0] {
			continue
		}
		n := matchLen(c, cur)
		if n > best {
			best, bestDist = n, i-cand
			if n >= dNice || n == limit {
				break
			}
		}
	}
	if bestDist == 0 {
		return 0, 0
	}
	return best, bestDist
}

// matchLen is how many bytes of cur c starts with (c is no shorter),
// 8 at a time.
func matchLen(c, cur []byte) int {
	n := 0
	for n+8 <= len(cur) {
		if x := binary.LittleEndian.Uint64(c[n:]) ^ binary.LittleEndian.Uint64(cur[n:]); x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
		n += 8
	}
	for n < len(cur) && c[n] == cur[n] {
		n++
	}
	return n
}

func (e *deflate32) literal(b byte) {
	e.tokens = append(e.tokens, uint32(b))
	e.litF[b]++
}

func (e *deflate32) match(length, dist int) {
	e.tokens = append(e.tokens, 1<<31|uint32(length)<<16|uint32(dist))
	e.litF[257+lengthCode(length)]++
	e.distF[distCode(dist)]++
}

// The length and distance codes' bases and extra bits (RFC 1951, 3.2.5).
var (
	lenBase  = [29]int{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra = [29]uint{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase = [30]int{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtr = [30]uint{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	// clOrder is the order the code length code's lengths are sent in.
	clOrder = [19]int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// lenCodes and distCodes map a length, and a distance of up to 256
// (larger ones by their bits above the 7th), to its code, as zlib's
// _length_code and _dist_code.
var lenCodes, distCodes = func() (l [dMaxMatch + 1]uint8, d [512]uint8) {
	for n := dMinMatch; n <= dMaxMatch; n++ {
		c, _ := slices.BinarySearch(lenBase[:], n+1)
		l[n] = uint8(c - 1)
	}
	for n := 1; n <= 256; n++ {
		c, _ := slices.BinarySearch(distBase[:], n+1)
		d[n] = uint8(c - 1)
	}
	for n := 257; n <= 1<<15; n += 128 {
		c, _ := slices.BinarySearch(distBase[:], n+1)
		d[256+(n-1)>>7] = uint8(c - 1)
	}
	return l, d
}()

func lengthCode(l int) int { return int(lenCodes[l]) }

func distCode(d int) int {
	if d <= 256 {
		return int(distCodes[d])
	}
	return int(distCodes[256+(d-1)>>7])
}
