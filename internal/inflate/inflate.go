package inflate

import "sync"

// decoder is one Decode's state; its tables (about 11 KiB) are pooled.
type decoder struct {
	r   bitReader
	dst []byte
	out int  // bytes of dst written
	cut bool // the last match or stored block went on past dst's end
	// whole: the stream must end where dst is full (DecodeWhole).
	whole bool
	// upTo: the stream may also end before dst is full (DecodeUpTo).
	upTo bool
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
	_, _, err := decode(dst, src, false, false)
	return err
}

// DecodeWhole is Decode for a stream that must end where dst is full:
// after dst's last byte, src must hold the rest of the stream, up to its
// final block's end code, and the rest must hold no more data (only
// block ends and empty blocks). Bytes after the stream are not looked
// at. It fails with an error wrapping io.ErrUnexpectedEOF when src ends
// first, and with ErrLong when the stream holds more than dst. It tells
// whether zlib, inflating into exactly dst, ends the stream whatever
// bytes follow src: a compressed cluster's length is known to the sector
// only, and the next cluster's bytes come next.
func DecodeWhole(dst, src []byte) error {
	_, _, err := decode(dst, src, true, false)
	return err
}

// DecodeUpTo decodes the whole stream src starts with, up to its final
// block's end code, into dst, which it need not fill: zlib's uncompress
// into a buffer of len(dst) (QEMU's read of a compressed vmdk grain). It
// says how many bytes it wrote (n) and how many of src the stream took
// (used, its last byte's unused bits included: a zlib trailer starts
// there). It fails with an error wrapping io.ErrUnexpectedEOF when src
// ends inside the stream, and with ErrLong when the stream holds more
// than dst.
func DecodeUpTo(dst, src []byte) (n, used int, err error) {
	return decode(dst, src, true, true)
}

func decode(dst, src []byte, whole, upTo bool) (n, used int, err error) {
	d := decoders.Get().(*decoder)
	d.r, d.dst, d.out, d.cut, d.whole, d.upTo = bitReader{src: src}, dst, 0, false, whole, upTo
	if err = d.blocks(); err == nil {
		n, used = d.out, d.r.used()
	}
	d.r.src, d.dst = nil, nil
	decoders.Put(d)
	return n, used, err
}

// blocks decodes block after block until dst is full.
func (d *decoder) blocks() error {
	for final := false; ; {
		if d.r.overrun() {
			return errTruncated
		}
		if d.out == len(d.dst) {
			return d.beyond(nil, final)
		}
		if final {
			if d.upTo {
				return nil
			}
			return errShort
		}
		h, err := d.r.read(3)
		if err != nil {
			return err
		}
		final = h&1 == 1
		var t *tables
		switch h >> 1 {
		case 0:
			err = d.stored()
		case 1:
			t = fixedTables()
		case 2:
			if err = d.readDynamic(); err == nil {
				t = &d.dyn
			}
		default:
			err = errBlockType
		}
		if t != nil {
			var ended bool
			if ended, err = d.huffman(t); err == nil && !ended {
				if d.r.overrun() {
					return errTruncated
				}
				return d.beyond(t, final)
			}
		}
		if err != nil {
			return err
		}
	}
}

// stored copies a stored block's bytes (as many as dst has room for).
func (d *decoder) stored() error {
	n, err := d.storedLen()
	if err != nil {
		return err
	}
	r := &d.r
	room := len(d.dst) - d.out
	d.cut = n > room
	n = min(n, room)
	if n > len(r.src)-r.pos {
		return errTruncated
	}
	d.out += copy(d.dst[d.out:], r.src[r.pos:r.pos+n])
	r.pos += n
	return nil
}

// storedLen reads a stored block's header: its length.
func (d *decoder) storedLen() (int, error) {
	r := &d.r
	if err := r.toByte(); err != nil {
		return 0, err
	}
	if r.pos+4 > len(r.src) {
		return 0, errTruncated
	}
	h := r.src[r.pos : r.pos+4]
	n := int(h[0]) | int(h[1])<<8
	if n != int(^h[2])|int(^h[3])<<8 {
		return 0, errStoredLen
	}
	r.pos += 4
	return n, nil
}
