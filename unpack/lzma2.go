package unpack

import (
	"bytes"
	"encoding/binary"
	"io"
)

// lzma2Reader decodes LZMA2 data, the one filter of the xz blocks
// decoded here, chunk by chunk. Each chunk says its sizes, so it is read
// whole (at most 64 KiB compressed) and decoded at once (at most 2 MiB)
// into a window. Nothing past the end chunk is read from in.
//
// The window is either the whole output of a block whose size is known
// (fixed: never moved), or a buffer of the dictionary plus room for
// chunks, slid back when full: the bytes are decoded in place, and a
// match is one copy, not a byte at a time through a ring.
type lzma2Reader struct {
	in     io.Reader
	lz     lzmaDec
	w      window
	fixed  bool
	rd     int // w.buf[rd:w.pos] is decoded, not yet read
	end    bool
	err    error
	packed []byte

	needDictReset, needProps bool
}

const (
	lzma2MaxPacked   = 1 << 16
	lzma2MaxUnpacked = 1 << 21
	// lzma2Room bounds what a sliding window holds beyond its dictionary:
	// a slide moves the dictionary back every so many bytes decoded.
	lzma2MinRoom = 4 << 20
	lzma2MaxRoom = 16 << 20
)

func newLZMA2Reader(in io.Reader, dictCap int) *lzma2Reader {
	return &lzma2Reader{in: in, w: window{dictCap: dictCap}, packed: make([]byte, lzma2MaxPacked),
		needDictReset: true, needProps: true}
}

// decodeLZMA2Into decodes in, the whole LZMA2 data of a block, into out,
// which it must fill exactly.
func decodeLZMA2Into(in []byte, dictCap int, out []byte) error {
	src := bytes.NewReader(in)
	z := newLZMA2Reader(src, dictCap)
	z.w.buf, z.fixed = out, true
	for !z.end {
		if err := z.chunk(); err != nil {
			return err
		}
	}
	if z.w.pos != len(out) {
		return corrupt("xz block gave %d bytes, its header says %d", z.w.pos, len(out))
	}
	if src.Len() != 0 {
		return corrupt("xz block longer than its header says")
	}
	return nil
}

// Read gives the decoded bytes; io.EOF after the end chunk.
func (z *lzma2Reader) Read(p []byte) (int, error) {
	for z.rd == z.w.pos {
		if z.err != nil {
			return 0, z.err
		}
		if z.end {
			return 0, io.EOF
		}
		if z.err = z.chunk(); z.err == nil && z.end && !z.fixed {
			putBuf(z.w.buf)
			z.w = window{}
			z.rd = 0
		}
	}
	n := copy(p, z.w.buf[z.rd:z.w.pos])
	z.rd += n
	return n, nil
}

// chunk reads and decodes the next chunk.
func (z *lzma2Reader) chunk() error {
	var hdr [6]byte
	if _, err := io.ReadFull(z.in, hdr[:1]); err != nil {
		return unexpected(err)
	}
	ctrl := hdr[0]
	if ctrl == 0 {
		z.end = true
		return nil
	}
	if ctrl == 1 || ctrl >= 0xE0 {
		z.needProps, z.needDictReset = true, false
		z.w.start, z.w.base = z.w.pos, z.w.pos
	} else if z.needDictReset {
		return corrupt("xz LZMA2: the first chunk does not reset the dictionary")
	}
	if ctrl < 0x80 {
		return z.stored(ctrl)
	}
	head := hdr[1:5]
	if ctrl >= 0xC0 {
		head = hdr[1:6]
	}
	if _, err := io.ReadFull(z.in, head); err != nil {
		return unexpected(err)
	}
	unpacked := int(ctrl&0x1F)<<16 + int(binary.BigEndian.Uint16(hdr[1:])) + 1
	packed := z.packed[:int(binary.BigEndian.Uint16(hdr[3:]))+1]
	switch {
	case ctrl >= 0xC0:
		if err := z.lz.setProps(hdr[5]); err != nil {
			return err
		}
		z.needProps = false
		z.lz.reset()
	case z.needProps:
		return corrupt("xz LZMA2: a chunk after a dictionary reset does not set the properties")
	case ctrl >= 0xA0:
		z.lz.reset()
	}
	if _, err := io.ReadFull(z.in, packed); err != nil {
		return unexpected(err)
	}
	if err := z.room(unpacked); err != nil {
		return err
	}
	if err := z.lz.rc.init(packed); err != nil {
		return err
	}
	if err := z.lz.decode(&z.w, z.w.pos+unpacked); err != nil {
		return err
	}
	if !z.lz.rc.finished() {
		return corrupt("xz LZMA2 chunk: its compressed size does not match its data")
	}
	return nil
}

// stored copies an uncompressed chunk (control 1 or 2) into the window.
func (z *lzma2Reader) stored(ctrl byte) error {
	if ctrl > 2 {
		return corrupt("xz LZMA2 control byte %#x", ctrl)
	}
	var size [2]byte
	if _, err := io.ReadFull(z.in, size[:]); err != nil {
		return unexpected(err)
	}
	n := int(binary.BigEndian.Uint16(size[:])) + 1
	if err := z.room(n); err != nil {
		return err
	}
	if _, err := io.ReadFull(z.in, z.w.buf[z.w.pos:z.w.pos+n]); err != nil {
		return unexpected(err)
	}
	z.w.pos += n
	return nil
}

// room makes room for n more bytes: in a fixed window there must be; a
// sliding one grows while its history is shorter than the dictionary (a
// dictionary larger than the data is never allocated whole: a header
// naming 1.5 GiB costs what the data needs), then keeps its dictionary
// and drops what was read before it.
func (z *lzma2Reader) room(n int) error {
	w := &z.w
	if w.pos+n <= len(w.buf) {
		return nil
	}
	if z.fixed {
		return corrupt("xz block longer than its header says")
	}
	room := min(max(w.dictCap, lzma2MinRoom), lzma2MaxRoom)
	if full := w.dictCap + room; len(w.buf) < full {
		z.grow(min(max(2*len(w.buf), w.pos+n, room), full))
		if w.pos+n <= len(w.buf) {
			return nil
		}
	}
	keep := min(w.pos-w.start, w.dictCap)
	shift := w.pos - keep
	copy(w.buf, w.buf[shift:w.pos])
	w.pos -= shift
	w.start = max(w.start-shift, 0)
	w.base -= shift
	z.rd = w.pos
	return nil
}

// grow moves the window into a buffer of size bytes.
func (z *lzma2Reader) grow(size int) {
	buf := getBuf(size)
	copy(buf, z.w.buf[:z.w.pos])
	putBuf(z.w.buf)
	z.w.buf = buf
}
