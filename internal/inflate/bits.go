package inflate

// bitReader holds the input's next bits, the first lowest. Past nbits,
// bits holds either zeros or the input's following bits (an 8-byte load
// brings in more than it counts), so ORing in a load at nbits is always
// right.
type bitReader struct {
	src   []byte
	pos   int    // next byte of src to load
	bits  uint64 // loaded bits
	nbits uint   // how many of bits are loaded, at most 63
	// over counts zero bytes loaded past src's end: near the end a
	// lookup may peek at more bits than its code has. Decoding that
	// consumed any of them needed input that is not there.
	over int
}

// refill loads bits until at least 56 are held.
func (r *bitReader) refill() error {
	if r.pos+8 <= len(r.src) {
		r.pos, r.bits, r.nbits = load8(r.src, r.pos, r.bits, r.nbits)
		return nil
	}
	for r.nbits < 56 {
		if r.pos < len(r.src) {
			r.bits |= uint64(r.src[r.pos]) << r.nbits
			r.pos++
		} else {
			r.over++
		}
		r.nbits += 8
	}
	// More than 8 zero bytes cannot all be in a 63-bit buffer: some were
	// consumed. Stopping here also bounds the work on a cut stream.
	if r.over > 8 {
		return errTruncated
	}
	return nil
}

// overrun says whether decoding consumed bits past the input's end.
func (r *bitReader) overrun() bool { return 8*r.over > int(r.nbits) }

// used is how many bytes of src the bits consumed so far reach into
// (a byte partly consumed counts).
func (r *bitReader) used() int { return (8*(r.pos+r.over) - int(r.nbits) + 7) / 8 }

// read takes the next n bits (n <= 32) as a number, first bit lowest.
func (r *bitReader) read(n uint) (uint32, error) {
	if r.nbits < n {
		if err := r.refill(); err != nil {
			return 0, err
		}
	}
	v := uint32(r.bits & (1<<n - 1))
	r.bits >>= n
	r.nbits -= n
	return v, nil
}

// toByte drops the bits up to the next byte boundary and gives back the
// whole bytes still held, so that src[pos:] is the rest of the input (a
// stored block is read from it directly).
func (r *bitReader) toByte() error {
	r.nbits -= r.nbits & 7
	next := r.pos + r.over - int(r.nbits>>3)
	if next > len(r.src) {
		return errTruncated
	}
	r.pos, r.bits, r.nbits, r.over = next, 0, 0, 0
	return nil
}

// skip drops n bits already held.
func (r *bitReader) skip(n uint) {
	r.bits >>= n
	r.nbits -= n
}
