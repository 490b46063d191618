package qcow2

import (
	"encoding/binary"
	"sync"

	"github.com/klauspost/compress/huff0"
)

// The zstd library stores a block's literals raw unless Huffman coding
// them saves 1/16 of their bytes (its huff0 WantLogLess 4, fixed in
// blockenc.go); zstd's own library codes them when that saves 1/64 (its
// ZSTD_minGain). Clusters that mix incompressible bytes with text or
// machine code have literals in between: on issue 24's bench disk
// (64 KiB clusters, seed 1) the library left raw the literals of 2000 of
// its 6200 compressed clusters, QEMU's zstd those of 670, and the image
// was 1.003x qemu-img -c's, though its sequences took about 6% fewer
// bytes. huffLiterals codes again what it left raw, with zstd's rule.

// huffScratch are huff0's encoders; Reuse is off, so a table from
// another cluster is never referred to.
var huffScratch = sync.Pool{New: func() any { return &huff0.Scratch{} }}

// zstd block types and literals section types (RFC 8878, 3.1.1.2 and
// 3.1.1.3.1.1).
const (
	zBlockRaw        = 0
	zBlockRLE        = 1
	zBlockCompressed = 2
	zLitRaw          = 0
	zLitRLE          = 1
	zLitCompressed   = 2
	zLitTreeless     = 3
)

// zBlock is one block of a frame: its type, where its content starts
// and ends in the frame, and its literals section's type (-1 for other
// blocks than compressed ones).
type zBlock struct {
	typ, start, end, lit int
}

// huffLiterals appends frame to dst with the raw literals of its blocks
// Huffman coded where that saves more than zstd's minimum gain: those of
// compressed blocks, and raw blocks made compressed blocks of literals
// alone. A frame it cannot parse, or that has a checksum, is appended
// as it is. A block is left as it is when a later block reuses the
// Huffman table in force (treeless literals): a new table would change
// what it decodes to.
func huffLiterals(dst, frame []byte) []byte {
	hdr, blocks, ok := zstdBlocks(frame)
	if !ok {
		return append(dst, frame...)
	}
	dst = append(dst, frame[:hdr]...)
	for i, b := range blocks {
		content := frame[b.start:b.end]
		last := i == len(blocks)-1
		if !reusesTable(blocks[i+1:]) {
			if out, ok := recodeBlock(dst, b, content, last); ok {
				dst = out
				continue
			}
		}
		dst = append(dst, frame[b.start-3:b.end]...) // its header too: an RLE block's tells the size it makes
	}
	return dst
}

// reusesTable says the first of blocks with Huffman coded literals
// codes them with the table before it.
func reusesTable(blocks []zBlock) bool {
	for _, b := range blocks {
		switch b.lit {
		case zLitTreeless:
			return true
		case zLitCompressed:
			return false
		}
	}
	return false
}

// recodeBlock appends block b with its raw literals Huffman coded, when
// that makes it smaller.
func recodeBlock(dst []byte, b zBlock, content []byte, last bool) ([]byte, bool) {
	var lits, rest []byte
	switch {
	case b.typ == zBlockRaw:
		lits, rest = content, []byte{0} // no sequences
	case b.typ == zBlockCompressed && b.lit == zLitRaw:
		n, h, ok := rawLiterals(content)
		if !ok {
			return dst, false
		}
		lits, rest = content[h:h+n], content[h+n:]
	default:
		return dst, false
	}
	if len(lits) < 64 {
		return dst, false
	}
	s := huffScratch.Get().(*huff0.Scratch)
	defer huffScratch.Put(s)
	s.Reuse = huff0.ReusePolicyNone
	s.WantLogLess = 0
	var coded []byte
	var err error
	single := len(lits) < 1024 // four streams from 1 KiB on, as the library
	if single {
		coded, _, err = huff0.Compress1X(lits, s)
	} else {
		coded, _, err = huff0.Compress4X(lits, s)
	}
	if err != nil {
		return dst, false
	}
	lh := compressedLitHeader(len(lits), len(coded), single)
	size := len(lh) + len(coded) + len(rest)
	// zstd's rule: literals are coded when that saves more than 1/64 of
	// them and 2 bytes (ZSTD_minGain).
	if len(lh)+len(coded) >= len(lits)-(len(lits)>>6+2) || size >= len(content) || lh == nil {
		return dst, false
	}
	dst = appendBlockHeader(dst, zBlockCompressed, size, last)
	dst = append(dst, lh...)
	dst = append(dst, coded...)
	return append(dst, rest...), true
}

// zstdBlocks parses a frame made by EncodeAll: the length of its header
// and its blocks. ok is false for anything else (a checksum, bytes after
// the last block, a cut frame).
func zstdBlocks(f []byte) (hdr int, blocks []zBlock, ok bool) {
	if len(f) < 6 || binary.LittleEndian.Uint32(f) != 0xFD2FB528 {
		return 0, nil, false
	}
	fhd := f[4]
	if fhd&4 != 0 { // checksum
		return 0, nil, false
	}
	single := fhd&0x20 != 0
	p := 5
	if !single {
		p++ // window descriptor
	}
	p += [4]int{0, 1, 2, 4}[fhd&3]
	switch fcs := fhd >> 6; {
	case fcs == 0 && single:
		p++
	case fcs > 0:
		p += 1 << fcs
	}
	hdr = p
	for {
		if p+3 > len(f) {
			return 0, nil, false
		}
		h := int(f[p]) | int(f[p+1])<<8 | int(f[p+2])<<16
		p += 3
		b := zBlock{typ: h >> 1 & 3, start: p, lit: -1}
		n := h >> 3
		if b.typ == zBlockRLE {
			n = 1
		}
		if b.typ == 3 || p+n > len(f) {
			return 0, nil, false
		}
		b.end = p + n
		if b.typ == zBlockCompressed && n > 0 {
			b.lit = int(f[p] & 3)
		}
		blocks = append(blocks, b)
		p = b.end
		if h&1 == 1 {
			return hdr, blocks, p == len(f)
		}
	}
}

// rawLiterals reads a raw literals section's header at the start of a
// compressed block: the literals' length and the header's.
func rawLiterals(c []byte) (n, h int, ok bool) {
	if len(c) < 1 || c[0]&3 != zLitRaw {
		return 0, 0, false
	}
	switch c[0] >> 2 & 3 {
	case 0, 2:
		n, h = int(c[0]>>3), 1
	case 1:
		if len(c) < 2 {
			return 0, 0, false
		}
		n, h = int(c[0]>>4)|int(c[1])<<4, 2
	case 3:
		if len(c) < 3 {
			return 0, 0, false
		}
		n, h = int(c[0]>>4)|int(c[1])<<4|int(c[2])<<12, 3
	}
	return n, h, h+n <= len(c)
}

// compressedLitHeader is the header of a Huffman coded literals section
// with a new table; nil when the sizes do not fit one.
func compressedLitHeader(regen, comp int, single bool) []byte {
	var sf, bits int
	switch m := max(regen, comp); {
	case single && m < 1<<10:
		sf, bits = 0, 10
	case single:
		return nil
	case m < 1<<10:
		sf, bits = 1, 10
	case m < 1<<14:
		sf, bits = 2, 14
	case m < 1<<18:
		sf, bits = 3, 18
	default:
		return nil
	}
	v := uint64(zLitCompressed) | uint64(sf)<<2 | uint64(regen)<<4 | uint64(comp)<<(4+bits)
	n := (4 + 2*bits + 7) / 8
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return b[:n]
}

func appendBlockHeader(dst []byte, typ, size int, last bool) []byte {
	h := typ<<1 | size<<3
	if last {
		h |= 1
	}
	return append(dst, byte(h), byte(h>>8), byte(h>>16))
}
