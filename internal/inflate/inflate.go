package inflate

import "sync"

// decoder is one Decode's state; its tables (about 11 KiB) are pooled.
type decoder struct {
	r    bitReader
	dst  []byte
	out  int // bytes of dst written
	dyn  tables
	pre  [preSize]uint32
	lens [286 + 30]uint8
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// Decode fills dst with the raw deflate stream that src starts with. It
// stops as soon as dst is full, whatever follows in src; it fails if the
// stream ends first (the error then wraps io.ErrUnexpectedEOF, as it does
// when src ends inside the stream) or is malformed (ErrCorrupt). On
// error, dst holds unspecified bytes. It is safe for concurrent use.
func Decode(dst, src []byte) error {
	if len(dst) == 0 {
		return nil
	}
	d := decoders.Get().(*decoder)
	d.r, d.dst, d.out = bitReader{src: src}, dst, 0
	err := d.blocks()
	d.r.src, d.dst = nil, nil
	decoders.Put(d)
	return err
}

// blocks decodes block after block until dst is full.
func (d *decoder) blocks() error {
	for final := false; ; {
		if d.r.overrun() {
			return errTruncated
		}
		if d.out == len(d.dst) {
			return nil
		}
		if final {
			return errShort
		}
		h, err := d.r.read(3)
		if err != nil {
			return err
		}
		final = h&1 == 1
		switch h >> 1 {
		case 0:
			err = d.stored()
		case 1:
			err = d.huffman(fixedTables())
		case 2:
			if err = d.readDynamic(); err == nil {
				err = d.huffman(&d.dyn)
			}
		default:
			err = errBlockType
		}
		if err != nil {
			return err
		}
	}
}

// stored copies a stored block's bytes (as many as dst has room for).
func (d *decoder) stored() error {
	r := &d.r
	if err := r.toByte(); err != nil {
		return err
	}
	if r.pos+4 > len(r.src) {
		return errTruncated
	}
	h := r.src[r.pos : r.pos+4]
	n := int(h[0]) | int(h[1])<<8
	if n != int(^h[2])|int(^h[3])<<8 {
		return errStoredLen
	}
	r.pos += 4
	n = min(n, len(d.dst)-d.out)
	if n > len(r.src)-r.pos {
		return errTruncated
	}
	d.out += copy(d.dst[d.out:], r.src[r.pos:r.pos+n])
	r.pos += n
	return nil
}
