package qcow2

import (
	"math/bits"
	"slices"

	"github.com/ringcp/ringcp/internal/inflate"
)

// bitWriter writes deflate's bits, least significant first.
type bitWriter struct {
	b    []byte
	acc  uint64
	nacc uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.nacc
	w.nacc += n
	for w.nacc >= 8 {
		w.b = append(w.b, byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

// code writes a Huffman code, whose bits go most significant first.
func (w *bitWriter) code(c uint16, n uint8) {
	w.bits(uint64(bits.Reverse16(c)>>(16-n)), uint(n))
}

func (w *bitWriter) flush() []byte {
	if w.nacc > 0 {
		w.b = append(w.b, byte(w.acc))
	}
	w.acc, w.nacc = 0, 0
	return w.b
}

// huffLengths gives each symbol with a frequency a code length of at
// most maxBits, as zlib's build_tree and gen_bitlen do: Huffman's
// lengths, and where they pass maxBits, zlib's repair of the counts per
// length, handed to the symbols by frequency. As zlib, at least two
// symbols get a code (deflate wants a bit sent even for one).
func huffLengths(freq []int32, maxBits int, lens []uint8) {
	clear(lens)
	type node struct {
		f           int64
		left, right int32 // children; -1 for a leaf
		sym         int32
	}
	// The leaves sorted by frequency, then symbol: keys of both.
	var keys [288]uint64
	nk := 0
	for s, f := range freq {
		if f > 0 {
			keys[nk] = uint64(f)<<16 | uint64(s)
			nk++
		}
	}
	for s := 0; nk < 2; s++ {
		if freq[s] == 0 {
			keys[nk] = 1<<16 | uint64(s)
			nk++
		}
	}
	slices.Sort(keys[:nk])
	var store [2 * 288]node
	nodes := store[:0]
	for _, k := range keys[:nk] {
		nodes = append(nodes, node{int64(k >> 16), -1, -1, int32(k & 0xffff)})
	}
	nleaves := len(nodes)
	// Two queues: the sorted leaves, and the inner nodes as made (their
	// weights never decrease).
	li, ii := 0, nleaves
	pick := func() int {
		if li < nleaves && (ii >= len(nodes) || nodes[li].f <= nodes[ii].f) {
			li++
			return li - 1
		}
		ii++
		return ii - 1
	}
	for k := 0; k < nleaves-1; k++ {
		a := pick()
		b := pick()
		nodes = append(nodes, node{nodes[a].f + nodes[b].f, int32(a), int32(b), -1})
	}
	// Depths from the root down (inner nodes come after their children).
	var depthStore [2 * 288]int
	depth := depthStore[:len(nodes)]
	var count [16]int
	overflow := 0
	for k := len(nodes) - 1; k >= 0; k-- {
		if n := nodes[k]; n.left >= 0 {
			depth[n.left], depth[n.right] = depth[k]+1, depth[k]+1
			continue
		}
		d := depth[k]
		if d > maxBits {
			d = maxBits
			overflow++
		}
		count[d]++
	}
	if overflow > 0 {
		// The clamped lengths oversubscribe the code by excess
		// 2^-maxBits units; zlib's gen_bitlen step (a leaf moved one
		// level down, a clamped one up beside it) takes one away.
		excess := -1 << maxBits
		for b := 1; b <= maxBits; b++ {
			excess += count[b] << (maxBits - b)
		}
		for ; excess > 0; excess-- {
			b := maxBits - 1
			for count[b] == 0 {
				b--
			}
			count[b]--
			count[b+1] += 2
			count[maxBits]--
		}
	}
	// The longest codes to the rarest symbols (the leaves are sorted).
	k := 0
	for b := maxBits; b >= 1; b-- {
		for range count[b] {
			lens[nodes[k].sym] = uint8(b)
			k++
		}
	}
}

// canonical makes the codes of lengths (RFC 1951, 3.2.2).
func canonical(lens []uint8, codes []uint16) {
	var count [16]uint16
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [16]uint16
	c := uint16(0)
	for b := 1; b < 16; b++ {
		c = (c + count[b-1]) << 1
		next[b] = c
	}
	for s, l := range lens {
		if l > 0 {
			codes[s] = next[l]
			next[l]++
		}
	}
}

// writeBlock writes the tokens as one final block, dynamic or fixed,
// whichever is shorter.
func (e *deflate32) writeBlock() {
	var litL [288]uint8
	var distL [30]uint8
	huffLengths(e.litF[:], 15, litL[:286])
	huffLengths(e.distF[:], 15, distL[:])
	nlit := 257
	for s := 285; s >= 257; s-- {
		if litL[s] > 0 {
			nlit = s + 1
			break
		}
	}
	ndist := 1
	for s := 29; s >= 1; s-- {
		if distL[s] > 0 {
			ndist = s + 1
			break
		}
	}
	// The code lengths, run-length coded over both alphabets at once
	// (RFC 1951 lets the runs cross from one to the other).
	all := make([]uint8, 0, nlit+ndist)
	all = append(append(all, litL[:nlit]...), distL[:ndist]...)
	runs := codeLengthRuns(all)
	var clF [19]int32
	for _, r := range runs {
		clF[r&0x1f]++
	}
	var clL [19]uint8
	huffLengths(clF[:], 7, clL[:])
	nclen := 4
	for k := 18; k >= 4; k-- {
		if clL[clOrder[k]] > 0 {
			nclen = k + 1
			break
		}
	}
	dyn := 3 + 5 + 5 + 4 + 3*nclen
	for _, r := range runs {
		dyn += int(clL[r&0x1f]) + int(r>>8&0xff)
	}
	dyn += e.dataBits(litL[:], distL[:])
	fixedL, fixedD := fixedLengths()
	fixed := 3 + e.dataBits(fixedL[:], fixedD[:])
	w := &e.out
	if fixed <= dyn {
		w.bits(1|1<<1, 3) // final, fixed
		e.writeData(fixedL[:], fixedD[:])
		return
	}
	w.bits(1|2<<1, 3) // final, dynamic
	w.bits(uint64(nlit-257), 5)
	w.bits(uint64(ndist-1), 5)
	w.bits(uint64(nclen-4), 4)
	for k := range nclen {
		w.bits(uint64(clL[clOrder[k]]), 3)
	}
	var clC [19]uint16
	canonical(clL[:], clC[:])
	for _, r := range runs {
		sym := r & 0x1f
		w.code(clC[sym], clL[sym])
		if n := uint(r >> 8 & 0xff); n > 0 {
			w.bits(uint64(r>>16), n)
		}
	}
	e.writeData(litL[:], distL[:])
}

// codeLengthRuns codes lengths with the code length alphabet: each
// entry is symbol | extra bits<<8 | extra value<<16.
func codeLengthRuns(l []uint8) []uint32 {
	var out []uint32
	for i := 0; i < len(l); {
		v := l[i]
		n := 1
		for i+n < len(l) && l[i+n] == v {
			n++
		}
		i += n
		if v == 0 {
			for n >= 11 {
				k := min(n, 138)
				out = append(out, 18|7<<8|uint32(k-11)<<16)
				n -= k
			}
			if n >= 3 {
				out = append(out, 17|3<<8|uint32(n-3)<<16)
				n = 0
			}
		} else {
			out = append(out, uint32(v))
			n--
			for n >= 3 {
				k := min(n, 6)
				out = append(out, 16|2<<8|uint32(k-3)<<16)
				n -= k
			}
		}
		for ; n > 0; n-- {
			out = append(out, uint32(v))
		}
	}
	return out
}

// fixedLengths are the fixed code's lengths, of 288 symbols: the two
// that never occur take part in making the codes of the others.
func fixedLengths() (lit [288]uint8, dist [30]uint8) {
	for s := range lit {
		lit[s] = inflate.FixedLitLength(s)
	}
	for s := range dist {
		dist[s] = 5
	}
	return lit, dist
}

// dataBits is how many bits the tokens and the end of block take with
// these lengths.
func (e *deflate32) dataBits(litL, distL []uint8) int {
	n := int(litL[256])
	for s, f := range e.litF[:256] {
		n += int(f) * int(litL[s])
	}
	for c, f := range e.litF[257:] {
		n += int(f) * (int(litL[257+c]) + int(lenExtra[c]))
	}
	for c, f := range e.distF {
		n += int(f) * (int(distL[c]) + int(distExtr[c]))
	}
	return n
}

func (e *deflate32) writeData(litL, distL []uint8) {
	var litC [288]uint16
	var distC [30]uint16
	canonical(litL, litC[:])
	canonical(distL, distC[:])
	w := &e.out
	for _, t := range e.tokens {
		if t>>31 == 0 {
			w.code(litC[t], litL[t])
			continue
		}
		length, dist := int(t>>16&0x1ff), int(t&0xffff)
		lc := lengthCode(length)
		w.code(litC[257+lc], litL[257+lc])
		if x := lenExtra[lc]; x > 0 {
			w.bits(uint64(length-lenBase[lc]), x)
		}
		dc := distCode(dist)
		w.code(distC[dc], distL[dc])
		if x := distExtr[dc]; x > 0 {
			w.bits(uint64(dist-distBase[dc]), x)
		}
	}
	w.code(litC[256], litL[256])
}
