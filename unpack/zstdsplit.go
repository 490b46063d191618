package unpack

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// zstd frames (RFC 8878, 3.1): a magic, a header, blocks each with a
// 3-byte header that gives its size, an optional checksum. Skippable
// frames (pzstd's size records) hold nothing to decode.

// zstdSplitter cuts a zstd input into frames for the pipeline: a frame
// within maxUnit (compressed and, when the header says, decompressed) is
// read whole and decoded by a worker (DecodeAll); a larger one is decoded
// in place by a stream decoder that sees the frame's bytes only.
type zstdSplitter struct {
	in      *bufio.Reader
	maxUnit int64
	threads int
	dec     *zstd.Decoder // DecodeAll for the workers: safe for concurrent use
}

const zstdMaxBlock = 128 << 10

func newZstdSplitter(in *bufio.Reader, maxUnit int64, threads int) (*zstdSplitter, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(threads))
	if err != nil {
		return nil, err
	}
	return &zstdSplitter{in: in, maxUnit: maxUnit, threads: threads, dec: dec}, nil
}

func (z *zstdSplitter) split(emit func(*unit) error) error {
	for {
		var m [4]byte
		if n, err := io.ReadFull(z.in, m[:]); err != nil {
			if err == io.EOF && n == 0 {
				return nil
			}
			return unexpected(err)
		}
		magic := binary.LittleEndian.Uint32(m[:])
		if magic&^0xF == zstdSkippableMagic {
			if err := z.skip(); err != nil {
				return err
			}
			continue
		}
		if magic != zstdMagic {
			return corrupt("not a zstd frame (magic %#08x)", magic)
		}
		f := &zstdFrame{in: z.in, buf: append(getBuf(0), m[:]...)}
		if err := z.frame(f, emit); err != nil {
			return err
		}
	}
}

// skip passes a skippable frame's content.
func (z *zstdSplitter) skip() error {
	var s [4]byte
	if _, err := io.ReadFull(z.in, s[:]); err != nil {
		return unexpected(err)
	}
	n := int64(binary.LittleEndian.Uint32(s[:]))
	if k, err := io.CopyN(io.Discard, z.in, n); err != nil || k != n {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// frame reads f's header and blocks up to maxUnit, and emits it whole,
// or the part read and the rest in place.
func (z *zstdSplitter) frame(f *zstdFrame, emit func(*unit) error) error {
	if err := f.header(); err != nil {
		return err
	}
	fits := func() bool {
		return int64(len(f.buf)) <= z.maxUnit && f.bound <= z.maxUnit && f.contentSize <= uint64(z.maxUnit)
	}
	for !f.last && fits() {
		if err := f.block(); err != nil {
			return err
		}
	}
	if !f.last || !fits() {
		return emit(z.inPlace(io.MultiReader(bytes.NewReader(f.buf), f)))
	}
	if err := f.readChecksum(); err != nil {
		return err
	}
	bound := f.bound
	decode := func(in []byte) ([]byte, error) { return z.decodeAll(in, bound) }
	return emit(&unit{in: f.buf, done: make(chan struct{}), decode: decode,
		fallback: func(in []byte) io.Reader { return z.inPlace(bytes.NewReader(in)).stream }})
}

// errInPlace: a frame decodes to more than maxUnit; decode it in place.
var errInPlace = errors.New("unit too large to decode in memory")

// decodeAll decodes a frame whose blocks decode to at most bound bytes.
func (z *zstdSplitter) decodeAll(in []byte, bound int64) ([]byte, error) {
	out, err := z.dec.DecodeAll(in, getBuf(int(bound))[:0])
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return nil, errInPlace
	}
	if err != nil {
		return nil, corrupt("zstd: %v", err)
	}
	return out, nil
}

// inPlace is a unit that decodes frame (one frame's bytes, then EOF) with
// a stream decoder, which overlaps a frame's blocks on a few cores.
func (z *zstdSplitter) inPlace(frame io.Reader) *unit {
	dec, err := zstd.NewReader(frame, zstd.WithDecoderConcurrency(z.threads))
	var r io.Reader = &zstdStream{dec: dec}
	if err != nil {
		r = errReader{corrupt("zstd: %v", err)}
	}
	return &unit{stream: r, release: make(chan struct{})}
}

// zstdStream is a stream decoder's output; it closes the decoder (its
// goroutines) at the end.
type zstdStream struct{ dec *zstd.Decoder }

func (s *zstdStream) Read(p []byte) (int, error) {
	n, err := s.dec.Read(p)
	if err != nil {
		// The source's own failure or the decoder's: Reader.failure
		// tells them apart.
		s.dec.Close()
	}
	return n, err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// zstdFrame is one frame as it is read: its bytes so far, and where its
// blocks are. Past what buf holds, Read gives the rest of the frame from
// in and then io.EOF, walking the block headers as they go by.
type zstdFrame struct {
	in          *bufio.Reader
	buf         []byte
	checksum    bool
	contentSize uint64 // 0 when the header does not say
	bound       int64  // the most the blocks read decode to
	last        bool   // the last block was read
	left        int64  // bytes of the current block (or checksum) still to give
	done        bool
}

// header reads the frame header (the magic is in buf).
func (f *zstdFrame) header() error {
	fhd, err := f.in.ReadByte()
	if err != nil {
		return unexpected(err)
	}
	if fhd&0x08 != 0 {
		return corrupt("zstd frame header reserved bit")
	}
	single := fhd&0x20 != 0
	f.checksum = fhd&0x04 != 0
	n := [4]int{0, 1, 2, 4}[fhd&0x03]
	if !single {
		n++ // window descriptor
	}
	fcs := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcs == 0 && single {
		fcs = 1
	}
	rest := make([]byte, n+fcs)
	if _, err := io.ReadFull(f.in, rest); err != nil {
		return unexpected(err)
	}
	f.contentSize = frameContentSize(rest[n:])
	f.buf = append(append(f.buf, fhd), rest...)
	return nil
}

func frameContentSize(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b)) + 256
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// blockHeader parses a block header: its payload's size, and whether it
// is the frame's last.
func blockHeader(h []byte) (payload int64, last bool, err error) {
	v := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
	size := int64(v >> 3)
	switch (v >> 1) & 3 {
	case 1: // RLE: one byte repeated size times
		payload = 1
	case 3:
		return 0, false, corrupt("zstd reserved block type")
	default:
		payload = size
	}
	if size > zstdMaxBlock {
		return 0, false, corrupt("zstd block of %d bytes", size)
	}
	return payload, v&1 != 0, nil
}

// blockBound is the most a block decodes to: its size for a raw or RLE
// block, the largest block for a compressed one.
func blockBound(h []byte) int64 {
	v := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
	if (v>>1)&3 == 2 {
		return zstdMaxBlock
	}
	return int64(v >> 3)
}

// block reads one block into buf.
func (f *zstdFrame) block() error {
	start := len(f.buf)
	f.buf = append(f.buf, 0, 0, 0)
	if _, err := io.ReadFull(f.in, f.buf[start:]); err != nil {
		return unexpected(err)
	}
	payload, last, err := blockHeader(f.buf[start:])
	if err != nil {
		return err
	}
	f.last = last
	f.bound += blockBound(f.buf[start:])
	start = len(f.buf)
	f.buf = slices.Grow(f.buf, int(payload))[:start+int(payload)]
	if _, err := io.ReadFull(f.in, f.buf[start:]); err != nil {
		return unexpected(err)
	}
	return nil
}

func (f *zstdFrame) readChecksum() error {
	if !f.checksum {
		return nil
	}
	start := len(f.buf)
	f.buf = append(f.buf, 0, 0, 0, 0)
	_, err := io.ReadFull(f.in, f.buf[start:])
	return unexpected(err)
}

// Read gives the frame's bytes after buf: block headers and payloads up
// to the last block, then the checksum, then io.EOF.
func (f *zstdFrame) Read(p []byte) (int, error) {
	for f.left == 0 {
		switch {
		case f.done:
			return 0, io.EOF
		case f.last:
			f.done = true
			if f.checksum {
				f.left = 4
			}
		default:
			h, err := f.in.Peek(3)
			if err != nil {
				return 0, unexpected(err)
			}
			payload, last, err := blockHeader(h)
			if err != nil {
				return 0, err
			}
			f.left, f.last = 3+payload, last
		}
	}
	n, err := f.in.Read(p[:min(int64(len(p)), f.left)])
	f.left -= int64(n)
	if err != nil {
		return n, unexpected(err)
	}
	return n, nil
}
