package unpack

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
)

// The .xz container (The .xz File Format, version 1.2.0): streams of a
// header, blocks, an index and a footer, with zero padding between
// streams.

// ErrCorrupt is matched by every error about input that breaks its
// format's rules or checks.
var ErrCorrupt = errors.New("corrupt compressed data")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

const (
	xzHeaderSize = 12
	xzFooterSize = 12
	lzma2ID      = 0x21
)

var crc64Table = crc64.MakeTable(crc64.ECMA)

// xzCheckSizes are the sizes of the check field by check ID (4 bits).
var xzCheckSizes = [16]int{0, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 32, 32, 64, 64, 64}

// newCheck is the hash of a check ID, or nil for none; the IDs xz defines
// (0 none, 1 CRC32, 4 CRC64, 10 SHA-256): others are refused.
func newCheck(id byte) (func() hash.Hash, error) {
	switch id {
	case 0x00:
		return nil, nil
	case 0x01:
		return func() hash.Hash { return crc32.NewIEEE() }, nil
	case 0x04:
		return func() hash.Hash { return new(crc64Zeros) }, nil
	case 0x0A:
		return sha256.New, nil
	}
	return nil, corrupt("xz check type %#x is not one xz defines", id)
}

// xzStreamFlags reads a stream header's (or footer's) two flag bytes:
// the check ID.
func xzStreamFlags(flags []byte) (byte, error) {
	if flags[0] != 0 || flags[1]&0xF0 != 0 {
		return 0, corrupt("xz stream flags %x", flags)
	}
	return flags[1], nil
}

// readXzHeader reads a stream header: magic, flags, their CRC32.
func readXzHeader(r io.Reader) (check byte, err error) {
	var h [xzHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, unexpected(err)
	}
	if !bytes.Equal(h[:6], xzMagic) {
		return 0, corrupt("no xz stream header")
	}
	if crc32.ChecksumIEEE(h[6:8]) != binary.LittleEndian.Uint32(h[8:]) {
		return 0, corrupt("xz stream header CRC32")
	}
	return xzStreamFlags(h[6:8])
}

// readXzFooter reads a stream footer and checks it against the header's
// check ID and the index's size.
func readXzFooter(r io.Reader, check byte, indexSize int64) error {
	var f [xzFooterSize]byte
	if _, err := io.ReadFull(r, f[:]); err != nil {
		return unexpected(err)
	}
	if f[10] != 'Y' || f[11] != 'Z' {
		return corrupt("no xz stream footer")
	}
	if crc32.ChecksumIEEE(f[4:10]) != binary.LittleEndian.Uint32(f[:4]) {
		return corrupt("xz stream footer CRC32")
	}
	footerCheck, err := xzStreamFlags(f[8:10])
	if err != nil {
		return err
	}
	if footerCheck != check {
		return corrupt("xz stream footer's flags differ from its header's")
	}
	if backward := (int64(binary.LittleEndian.Uint32(f[4:8])) + 1) * 4; backward != indexSize {
		return corrupt("xz index is %d bytes, the footer says %d", indexSize, backward)
	}
	return nil
}

// unexpected turns an end of input in the middle of a structure into
// io.ErrUnexpectedEOF: the input was cut.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readVLI reads xz's variable-length integer (7 bits a byte, at most 9
// bytes), from a byte reader that counts.
func readVLI(r io.ByteReader) (uint64, error) {
	var v uint64
	for i := 0; i < 9; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, unexpected(err)
		}
		v |= uint64(b&0x7F) << (7 * i)
		if b&0x80 == 0 {
			if b == 0 && i > 0 {
				return 0, corrupt("xz integer not in its shortest form")
			}
			return v, nil
		}
	}
	return 0, corrupt("xz integer longer than 9 bytes")
}

// xzRecord is what the index says of a block.
type xzRecord struct {
	unpadded, uncompressed int64
}

// padding4 is how many zero bytes bring n to a multiple of four.
func padding4(n int64) int64 { return (4 - n%4) % 4 }

// readXzIndex reads an index (its indicator byte already read) and
// compares its records with the blocks decoded, one by one as they are
// read (an index listing more records than the stream has blocks fails at
// the first extra one, not after holding them all); it returns its size.
func readXzIndex(r io.Reader, blocks []xzRecord) (int64, error) {
	count, size, err := parseXzIndex(r, func(i uint64, rec xzRecord) error {
		if i >= uint64(len(blocks)) {
			return corrupt("xz index lists more blocks than the stream's %d", len(blocks))
		}
		if rec != blocks[i] {
			return corrupt("xz index record %d %+v differs from its block %+v", i, rec, blocks[i])
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if count != uint64(len(blocks)) {
		return 0, corrupt("xz index lists %d blocks, the stream has %d", count, len(blocks))
	}
	return size, nil
}

// parseXzIndex reads an index's records (its indicator byte already
// read), handing each to visit as it comes, then its padding and its
// CRC32; it returns how many records it holds and its size, indicator
// included. Nothing is kept per record: what an index makes the reader
// hold is what the caller keeps.
func parseXzIndex(r io.Reader, visit func(i uint64, rec xzRecord) error) (count uint64, size int64, err error) {
	h := crc32.NewIEEE()
	h.Write([]byte{0})
	br := &byteCounter{r: io.TeeReader(r, h), n: 1}
	if count, err = readVLI(br); err != nil {
		return 0, 0, err
	}
	for i := uint64(0); i < count; i++ {
		unpadded, err := readVLI(br)
		if err != nil {
			return 0, 0, err
		}
		uncompressed, err := readVLI(br)
		if err != nil {
			return 0, 0, err
		}
		if unpadded == 0 || unpadded > 1<<62 || uncompressed > 1<<62 {
			return 0, 0, corrupt("xz index record %d", i)
		}
		if err := visit(i, xzRecord{int64(unpadded), int64(uncompressed)}); err != nil {
			return 0, 0, err
		}
	}
	for pad := padding4(br.n); pad > 0; pad-- {
		if b, err := br.ReadByte(); err != nil || b != 0 {
			return 0, 0, corrupt("xz index padding")
		}
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return 0, 0, unexpected(err)
	}
	if binary.LittleEndian.Uint32(sum[:]) != h.Sum32() {
		return 0, 0, corrupt("xz index CRC32")
	}
	return count, br.n + 4, nil
}

// byteCounter reads single bytes from r, counting them.
type byteCounter struct {
	r   io.Reader
	n   int64
	buf [1]byte
}

func (b *byteCounter) ReadByte() (byte, error) {
	if _, err := io.ReadFull(b.r, b.buf[:]); err != nil {
		return 0, err
	}
	b.n++
	return b.buf[0], nil
}
