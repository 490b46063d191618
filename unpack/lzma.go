package unpack

// LZMA's symbols, as LZMA2 chunks carry them (the format is Igor
// Pavlov's; its description is in the LZMA SDK and in xz's
// documentation). The decoder writes into a window whose bytes before
// the write position are the dictionary: a match is a copy within it.

const (
	lzmaStates    = 12
	lzmaLitStates = 7 // states below this follow a literal
	lzmaLitSize   = 0x300
	lzmaEndMarker = 0xFFFFFFFF
	lzmaMaxLcLp   = 4 // LZMA2's bound on lc + lp
)

// lzmaLen decodes a match length (2 to 273).
type lzmaLen struct {
	choice, choice2 prob
	low, mid        [16][8]prob
	high            [256]prob
}

func (l *lzmaLen) decode(rc *rangeDec, posState int) int {
	if rc.bit(&l.choice) == 0 {
		return 2 + rc.tree(l.low[posState][:], 3)
	}
	if rc.bit(&l.choice2) == 0 {
		return 2 + 8 + rc.tree(l.mid[posState][:], 3)
	}
	return 2 + 16 + rc.tree(l.high[:], 8)
}

// lzmaProbs are the model's probabilities but the literals'.
type lzmaProbs struct {
	isMatch    [lzmaStates << 4]prob
	isRep      [lzmaStates]prob
	isRepG0    [lzmaStates]prob
	isRepG1    [lzmaStates]prob
	isRepG2    [lzmaStates]prob
	isRep0Long [lzmaStates << 4]prob
	slot       [4][64]prob
	special    [114]prob // distances of slots 4 to 13
	align      [16]prob
	matchLen   lzmaLen
	repLen     lzmaLen
}

// freshProbs is every probability at its start, copied in on a reset.
var freshProbs = func() (p lzmaProbs) {
	fill := func(s []prob) {
		for i := range s {
			s[i] = probInit
		}
	}
	for _, l := range []*lzmaLen{&p.matchLen, &p.repLen} {
		l.choice, l.choice2 = probInit, probInit
		for i := range l.low {
			fill(l.low[i][:])
			fill(l.mid[i][:])
		}
		fill(l.high[:])
	}
	fill(p.isMatch[:])
	fill(p.isRep[:])
	fill(p.isRepG0[:])
	fill(p.isRepG1[:])
	fill(p.isRepG2[:])
	fill(p.isRep0Long[:])
	for i := range p.slot {
		fill(p.slot[i][:])
	}
	fill(p.special[:])
	fill(p.align[:])
	return p
}()

// window holds the decoded bytes: buf[start:pos] is the history since
// the last dictionary reset, of which a match may reach back dictCap
// bytes. base is where the reset was, for the position bits (it moves
// with the bytes when the window slides, and may fall below zero).
type window struct {
	buf     []byte
	pos     int
	start   int
	base    int
	dictCap int
}

// lzmaDec is the LZMA model and state, kept across the chunks of a
// block unless a chunk resets them.
type lzmaDec struct {
	p          lzmaProbs
	lit        []prob
	lc, lp, pb uint
	state      int
	rep        [4]uint32
	rc         rangeDec
}

// setProps reads the lc, lp and pb byte of a chunk that sets them.
func (d *lzmaDec) setProps(b byte) error {
	if b >= 9*5*5 {
		return corrupt("xz LZMA2 properties byte %#x", b)
	}
	lc, lp, pb := uint(b%9), uint(b/9%5), uint(b/45)
	if lc+lp > lzmaMaxLcLp {
		return corrupt("xz LZMA2: lc %d + lp %d above %d", lc, lp, lzmaMaxLcLp)
	}
	d.lc, d.lp, d.pb = lc, lp, pb
	if n := lzmaLitSize << (lc + lp); cap(d.lit) >= n {
		d.lit = d.lit[:n]
	} else {
		d.lit = make([]prob, n)
	}
	return nil
}

// reset puts the model and state back at their start.
func (d *lzmaDec) reset() {
	d.p = freshProbs
	for i := range d.lit {
		d.lit[i] = probInit
	}
	d.state = 0
	d.rep = [4]uint32{}
}

// The state after a literal, a match, a repeated match, a one-byte
// repeat.
var (
	litNext      = [lzmaStates]int{0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 4, 5}
	matchNext    = [lzmaStates]int{7, 7, 7, 7, 7, 7, 7, 10, 10, 10, 10, 10}
	repNext      = [lzmaStates]int{8, 8, 8, 8, 8, 8, 8, 11, 11, 11, 11, 11}
	shortRepNext = [lzmaStates]int{9, 9, 9, 9, 9, 9, 9, 11, 11, 11, 11, 11}
)

// decode fills w.buf[w.pos:end] with the chunk's symbols. A match must
// end by end, and reach no further back than the history.
func (d *lzmaDec) decode(w *window, end int) error {
	buf, pos := w.buf, w.pos
	state := d.state
	rep0, rep1, rep2, rep3 := d.rep[0], d.rep[1], d.rep[2], d.rep[3]
	pbMask, lpMask, lc := 1<<d.pb-1, 1<<d.lp-1, d.lc
	rc := &d.rc
	var err error
	for pos < end {
		posState := (pos - w.base) & pbMask
		if rc.bit(&d.p.isMatch[state<<4|posState]) == 0 {
			buf[pos] = d.literal(buf, pos, w, lpMask, lc, state, rep0)
			pos++
			state = litNext[state]
			continue
		}
		var n int
		if rc.bit(&d.p.isRep[state]) == 0 {
			rep3, rep2, rep1 = rep2, rep1, rep0
			n = d.p.matchLen.decode(rc, posState)
			state = matchNext[state]
			if rep0 = d.distance(n); rep0 == lzmaEndMarker {
				err = corrupt("xz LZMA2: an end marker inside a chunk")
				break
			}
		} else {
			if rc.bit(&d.p.isRepG0[state]) == 0 {
				if rc.bit(&d.p.isRep0Long[state<<4|posState]) == 0 {
					if int(rep0) >= min(pos-w.start, w.dictCap) {
						err = corrupt("xz LZMA2: a match before the dictionary's start")
						break
					}
					state = shortRepNext[state]
					buf[pos] = buf[pos-int(rep0)-1]
					pos++
					continue
				}
			} else {
				var dist uint32
				if rc.bit(&d.p.isRepG1[state]) == 0 {
					dist = rep1
				} else {
					if rc.bit(&d.p.isRepG2[state]) == 0 {
						dist = rep2
					} else {
						dist, rep3 = rep3, rep2
					}
					rep2 = rep1
				}
				rep1, rep0 = rep0, dist
			}
			n = d.p.repLen.decode(rc, posState)
			state = repNext[state]
		}
		if int(rep0) >= min(pos-w.start, w.dictCap) {
			err = corrupt("xz LZMA2: a match before the dictionary's start")
			break
		}
		if n > end-pos {
			err = corrupt("xz LZMA2: a match past its chunk's end")
			break
		}
		pos = copyMatch(buf, pos, int(rep0)+1, n)
	}
	w.pos = pos
	d.state = state
	d.rep = [4]uint32{rep0, rep1, rep2, rep3}
	return err
}

// literal decodes a literal byte. After a match (state 7 and above) the
// byte at the last distance steers the decoding until a bit differs.
func (d *lzmaDec) literal(buf []byte, pos int, w *window, lpMask int, lc uint, state int, rep0 uint32) byte {
	prev := 0
	if pos > w.start {
		prev = int(buf[pos-1])
	}
	at := lzmaLitSize * (((pos-w.base)&lpMask)<<lc + prev>>(8-lc))
	probs := d.lit[at : at+lzmaLitSize]
	rc := &d.rc
	sym := uint32(1)
	if state < lzmaLitStates {
		for sym < 0x100 {
			sym = sym<<1 | rc.bit(&probs[sym])
		}
		return byte(sym)
	}
	match := uint32(buf[pos-int(rep0)-1]) << 1
	off := uint32(0x100)
	for sym < 0x100 {
		mbit := match & off
		match <<= 1
		b := rc.bit(&probs[off+mbit+sym])
		sym = sym<<1 | b
		if b != 0 {
			off = mbit
		} else {
			off &^= mbit
		}
	}
	return byte(sym)
}

// distance decodes a match's distance less one (lzmaEndMarker: the
// end marker) for a match of length n.
func (d *lzmaDec) distance(n int) uint32 {
	rc := &d.rc
	slot := rc.tree(d.p.slot[min(n-2, 3)][:], 6)
	if slot < 4 {
		return uint32(slot)
	}
	bits := uint(slot>>1) - 1
	dist := uint32(2|slot&1) << bits
	if slot < 14 {
		return dist + rc.reverse(d.p.special[:], int(dist)-slot-1, bits)
	}
	dist += rc.direct(bits-4) << 4
	return dist + rc.reverse(d.p.align[:], 0, 4)
}

// copyMatch copies n bytes from dist back to buf[pos:] and returns the
// new position. Overlapping copies (a run: dist smaller than n) double
// the copied span each round, so a run of zeros takes a few memmoves.
func copyMatch(buf []byte, pos, dist, n int) int {
	end := pos + n
	src := pos - dist
	if dist >= n {
		copy(buf[pos:end], buf[src:src+n])
		return end
	}
	for pos < end {
		pos += copy(buf[pos:end], buf[src:pos])
	}
	return end
}
