package unpack

// prob is an LZMA probability: the chance, out of 2048, that the next
// bit is 0.
type prob uint16

const (
	probBits = 11
	probInit = prob(1 << probBits / 2)
	probMove = 5
	rangeTop = 1 << 24
)

// rangeDec is LZMA's range decoder over one LZMA2 chunk's compressed
// bytes, all in memory: the chunk's sizes are in its header, so the
// decoder never waits for input in the middle of a symbol. Reading past
// the chunk gives zeros and counts on (i > len(in)); the chunk's end
// check then fails.
type rangeDec struct {
	in   []byte
	i    int
	rng  uint32
	code uint32
}

// init starts decoding in: a zero byte, then the first code.
func (rc *rangeDec) init(in []byte) error {
	if len(in) < 5 || in[0] != 0 {
		return corrupt("xz LZMA2 chunk: range coder start")
	}
	rc.in, rc.i = in, 5
	rc.rng = 0xFFFFFFFF
	rc.code = uint32(in[1])<<24 | uint32(in[2])<<16 | uint32(in[3])<<8 | uint32(in[4])
	return nil
}

// finished: the chunk's bytes were all used, no more, and the code came
// back to zero, as the encoder's flush leaves it. The decoder normalizes
// once more at the chunk's end, as LZMA's own does.
func (rc *rangeDec) finished() bool {
	if rc.rng < rangeTop {
		rc.shift()
	}
	return rc.i == len(rc.in) && rc.code == 0
}

// shift takes the next input byte. LZMA normalizes before each bit (not
// after), so that a chunk's last bit reads no byte past it.
func (rc *rangeDec) shift() {
	var b byte
	if rc.i < len(rc.in) {
		b = rc.in[rc.i]
	}
	rc.i++
	rc.rng <<= 8
	rc.code = rc.code<<8 | uint32(b)
}

// bit decodes one bit with probability p and adapts p.
func (rc *rangeDec) bit(p *prob) uint32 {
	if rc.rng < rangeTop {
		rc.shift()
	}
	bound := (rc.rng >> probBits) * uint32(*p)
	if rc.code < bound {
		rc.rng = bound
		*p += (1<<probBits - *p) >> probMove
		return 0
	}
	rc.rng -= bound
	rc.code -= bound
	*p -= *p >> probMove
	return 1
}

// tree decodes bits bits, highest first, over the 1<<bits probabilities
// of a binary tree.
func (rc *rangeDec) tree(probs []prob, bits uint) int {
	sym := 1
	for sym < 1<<bits {
		sym = sym<<1 | int(rc.bit(&probs[sym]))
	}
	return sym - 1<<bits
}

// reverse decodes bits bits, lowest first, over the tree at probs[base:]
// (whose node 0 is never used: base may be one before a table's start).
func (rc *rangeDec) reverse(probs []prob, base int, bits uint) uint32 {
	sym, res := 1, uint32(0)
	for i := uint(0); i < bits; i++ {
		b := rc.bit(&probs[base+sym])
		sym = sym<<1 | int(b)
		res |= b << i
	}
	return res
}

// direct decodes n bits of even probability.
func (rc *rangeDec) direct(n uint) uint32 {
	var res uint32
	for ; n > 0; n-- {
		if rc.rng < rangeTop {
			rc.shift()
		}
		rc.rng >>= 1
		rc.code -= rc.rng
		t := 0 - (rc.code >> 31) // all ones when code was below rng
		rc.code += rc.rng & t
		res = res<<1 + t + 1
	}
	return res
}
