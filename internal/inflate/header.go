package inflate

// readDynamic reads a dynamic block's header (RFC 1951 3.2.7) and builds
// its tables into d.dyn.
func (d *decoder) readDynamic() error {
	r := &d.r
	h, err := r.read(14)
	if err != nil {
		return err
	}
	nlit, ndist, npre := int(h&31)+257, int(h>>5&31)+1, int(h>>10)+4
	if nlit > 286 || ndist > 30 {
		return errCounts
	}
	var preLens [19]uint8
	for _, s := range preOrder[:npre] {
		l, err := r.read(3)
		if err != nil {
			return err
		}
		preLens[s] = uint8(l)
	}
	// zlib reads a code-length code with no code at all as a length 0
	// for every bit, and refuses one of a single code.
	if err := build(d.pre[:], preBits, preLens[:], preTmpl[:], preTmpl[0]|1|1<<8, false); err != nil {
		return err
	}
	lens := d.lens[:nlit+ndist]
	if err := d.readLengths(lens); err != nil {
		return err
	}
	if lens[256] == 0 {
		return errNoEnd
	}
	if err := build(d.dyn.lit[:], litBits, lens[:nlit], litTmpl[:], noCode, true); err != nil {
		return err
	}
	return build(d.dyn.dist[:], distBits, lens[nlit:], distTmpl[:], noCode, true)
}

// readLengths decodes the literal/length and distance code lengths with
// the code-length code: 0-15 a length, 16 repeats the previous one 3-6
// times, 17 and 18 give 3-10 and 11-138 zeros.
func (d *decoder) readLengths(lens []uint8) error {
	r := &d.r
	for i := 0; i < len(lens); {
		if r.nbits < preBits+7 { // a code and its extra bits
			if err := r.refill(); err != nil {
				return err
			}
		}
		e := d.pre[r.bits&preMask]
		if e&flagBad != 0 {
			return errCode
		}
		r.bits >>= e & 0xff
		r.nbits -= uint(e & 0xff)
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var n uint32
		var l uint8
		switch sym {
		case 16:
			// zlib reads the count before it finds nothing to repeat.
			n = 3 + uint32(r.bits&3)
			r.bits >>= 2
			r.nbits -= 2
			if i == 0 {
				return errRepeat
			}
			l = lens[i-1]
		case 17:
			n = 3 + uint32(r.bits&7)
			r.bits >>= 3
			r.nbits -= 3
		default:
			n = 11 + uint32(r.bits&127)
			r.bits >>= 7
			r.nbits -= 7
		}
		if i+int(n) > len(lens) {
			return errRepeat
		}
		for range n {
			lens[i] = l
			i++
		}
	}
	return nil
}
