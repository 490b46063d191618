package inflate

import "encoding/binary"

// huffman decodes a Huffman-coded block with tables t until its end code
// (ended) or until dst is full. The state lives in locals so that it stays in
// registers (a deferred write-back would take their addresses); it goes
// back to d.r around the slow refill and at the end. Shift counts are
// masked to 63 (an entry's never passes 28) so that each compiles to one
// instruction.
//
// After a refill at least 48 bits are held: a length code and its extra
// bits take at most 15+5, a distance 15+13, so a whole match. After a
// literal (15 bits at most) the next code's entry is looked up before
// the refill, which then stays off the lookup's path.
func (d *decoder) huffman(t *tables) (ended bool, err error) {
	r := &d.r
	src, pos, bits, nbits := r.src, r.pos, r.bits, r.nbits
	dst, out := d.dst, d.out
	var e uint32
	refilled := false
	for out < len(dst) {
		if !refilled {
			if pos+8 <= len(src) {
				pos, bits, nbits = load8(src, pos, bits, nbits)
			} else if nbits < 48 {
				r.pos, r.bits, r.nbits = pos, bits, nbits
				if err = r.refill(); err != nil {
					break
				}
				pos, bits, nbits = r.pos, r.bits, r.nbits
			}
			e = t.lit[bits&litMask]
		}
		refilled = false
		if e&flagSub != 0 {
			bits >>= litBits
			nbits -= litBits
			e = t.lit[e>>16+uint32(bits)&(1<<(e>>8&15)-1)]
		}
		saved := bits
		bits >>= e & 63
		nbits -= uint(e & 0xff)
		if e&flagLiteral != 0 {
			dst[out] = byte(e >> 16)
			out++
			e = t.lit[bits&litMask]
			if pos+8 <= len(src) {
				pos, bits, nbits = load8(src, pos, bits, nbits)
				refilled = true
			}
			continue
		}
		if e&(flagEnd|flagBad) != 0 {
			if e&flagBad != 0 {
				err = errCode
			}
			ended = true
			break
		}
		length := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))

		e = t.dist[bits&distMask]
		if e&flagSub != 0 {
			bits >>= distBits
			nbits -= distBits
			e = t.dist[e>>16+uint32(bits)&(1<<(e>>8&15)-1)]
		}
		saved = bits
		bits >>= e & 63
		nbits -= uint(e & 0xff)
		if e&flagBad != 0 {
			err = errCode
			break
		}
		dist := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))
		if dist > out {
			err = errDistance
			break
		}
		if length > len(dst)-out {
			length = len(dst) - out
			d.cut = true
		}
		if from := out - dist; dist >= 8 && len(dst)-out >= length+8 {
			// The common case, here rather than in copyMatch to save
			// the call: whole words, each read from bytes already
			// written. Up to 7 bytes past the match are overwritten
			// by later output (at least 8 more are to come).
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(dst[out+i:], binary.LittleEndian.Uint64(dst[from+i:]))
			}
		} else {
			copyMatch(dst, out, dist, length)
		}
		out += length
	}
	r.pos, r.bits, r.nbits, d.out = pos, bits, nbits, out
	return ended, err
}

// load8 is refill's fast case, inlined into huffman: 8 bytes at once
// (src[pos:] has them), of which it counts the whole bytes that fit,
// leaving 56 to 63 bits held. The bytes it loads past those are the
// input's next ones, which the next load puts at the same place.
func load8(src []byte, pos int, bits uint64, nbits uint) (int, uint64, uint) {
	bits |= binary.LittleEndian.Uint64(src[pos:]) << (nbits & 63)
	return pos + int(63-nbits)>>3, bits, nbits | 56
}

// copyMatch copies length bytes from dist back where huffman's word copy
// does not apply: the source overlaps the destination (dist < 8: a run
// of a repeated pattern), or dst ends within 8 bytes of the match.
func copyMatch(dst []byte, out, dist, length int) {
	from := out - dist
	if dist >= 8 || len(dst)-out < length+8 {
		// The pattern doubles at each copy (what is copied is a whole
		// number of periods), so a long run of one byte takes a few
		// copies.
		for n := 0; n < length; {
			n += copy(dst[out+n:out+length], dst[from:out+n])
		}
		return
	}
	// A short period (runs of zeros in programs, of 2- and 4-byte
	// patterns): the first 8 bytes one by one, then that word again
	// every whole number of periods, which may write up to 7 bytes past
	// the match (later output overwrites them: at least 8 more bytes
	// are to come).
	for i := range 8 {
		dst[out+i] = dst[from+i]
	}
	w := binary.LittleEndian.Uint64(dst[out:])
	step := 8 - 8%dist
	for i := step; i < length; i += step {
		binary.LittleEndian.PutUint64(dst[out+i:], w)
	}
}
