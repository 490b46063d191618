package unpack

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash"
	"hash/crc32"
	"io"
)

// xzBlockHeader is a block's header: its size, the sizes it announces
// (-1: not given) and the LZMA2 dictionary size, the one filter decoded.
type xzBlockHeader struct {
	size         int64
	compressed   int64
	uncompressed int64
	dictCap      int64
}

// readXzBlockHeader reads a block header whose first byte (size/4 - 1,
// not 0: that is the index) was peeked.
func readXzBlockHeader(r *bufio.Reader) (*xzBlockHeader, error) {
	first, err := r.ReadByte()
	if err != nil {
		return nil, unexpected(err)
	}
	size := (int(first) + 1) * 4
	raw := make([]byte, size)
	raw[0] = first
	if _, err := io.ReadFull(r, raw[1:]); err != nil {
		return nil, unexpected(err)
	}
	if crc32.ChecksumIEEE(raw[:size-4]) != binary.LittleEndian.Uint32(raw[size-4:]) {
		return nil, corrupt("xz block header CRC32")
	}
	return parseXzBlockHeader(raw)
}

func parseXzBlockHeader(raw []byte) (*xzBlockHeader, error) {
	h := &xzBlockHeader{size: int64(len(raw)), compressed: -1, uncompressed: -1}
	flags := raw[1]
	if flags&0x3C != 0 {
		return nil, corrupt("xz block flags %#x", flags)
	}
	br := bytes.NewReader(raw[2 : len(raw)-4])
	if flags&0x40 != 0 {
		v, err := readVLI(br)
		if err != nil || v == 0 {
			return nil, corrupt("xz block compressed size")
		}
		h.compressed = int64(v)
	}
	if flags&0x80 != 0 {
		v, err := readVLI(br)
		if err != nil {
			return nil, corrupt("xz block uncompressed size")
		}
		h.uncompressed = int64(v)
	}
	filters := int(flags&0x03) + 1
	for i := 0; i < filters; i++ {
		id, err1 := readVLI(br)
		propSize, err2 := readVLI(br)
		if err1 != nil || err2 != nil || propSize > uint64(br.Len()) {
			return nil, corrupt("xz filter flags")
		}
		props := make([]byte, propSize)
		br.Read(props)
		if id != lzma2ID || filters != 1 {
			return nil, corrupt("xz filter %#x: only LZMA2 alone is supported (no BCJ or delta filters)", id)
		}
		if propSize != 1 || props[0] > 40 {
			return nil, corrupt("xz LZMA2 properties")
		}
		h.dictCap = lzma2DictCap(props[0])
	}
	for br.Len() > 0 {
		if b, _ := br.ReadByte(); b != 0 {
			return nil, corrupt("xz block header padding")
		}
	}
	return h, nil
}

// lzma2DictCap decodes LZMA2's dictionary size byte.
func lzma2DictCap(p byte) int64 {
	if p == 40 {
		return 0xFFFFFFFF
	}
	return (2 | int64(p&1)) << (p/2 + 11)
}

// blockTail is the bytes after a block's compressed data: zero padding
// to a multiple of four, then the check.
func (h *xzBlockHeader) tail(compressed int64, checkSize int) int64 {
	return padding4(h.size+compressed) + int64(checkSize)
}

// record is what the index must say of the block once decoded.
func (h *xzBlockHeader) record(compressed, uncompressed int64, checkSize int) xzRecord {
	return xzRecord{unpadded: h.size + compressed + int64(checkSize), uncompressed: uncompressed}
}

// maxDict is the largest dictionary accepted: xz's own tools write at
// most 1.5 GiB. The decoder allocates the dictionary at once, so a
// header that asks for more is refused rather than obeyed.
const maxDict = 1536 << 20

// dictSize is the dictionary the block's data needs. It never needs to
// be larger than the block's data: a small block of a -9 file does not
// get 64 MiB.
func (h *xzBlockHeader) dictSize() (int, error) {
	dict := h.dictCap
	if dict > maxDict {
		return 0, corrupt("xz dictionary of %d bytes, more than the %d xz writes", dict, maxDict)
	}
	if h.uncompressed >= 0 {
		dict = min(dict, h.uncompressed)
	}
	return int(max(dict, minDict)), nil
}

// minDict is the smallest dictionary LZMA2 names (4 KiB).
const minDict = 4096

// checkTail verifies a block's padding and check against sum.
func checkTail(tail []byte, pad int64, sum hash.Hash) error {
	for _, b := range tail[:pad] {
		if b != 0 {
			return corrupt("xz block padding")
		}
	}
	if sum != nil && !bytes.Equal(tail[pad:], checkBytes(sum)) {
		return corrupt("xz block check (%d bytes) differs: the data is damaged", len(tail)-int(pad))
	}
	return nil
}

// decodeXzBlock decodes a whole block held in memory: its compressed
// data, padding and check, exactly (a worker's job).
func decodeXzBlock(h *xzBlockHeader, checkID byte, in []byte) ([]byte, error) {
	newSum, _ := newCheck(checkID)
	dict, err := h.dictSize()
	if err != nil {
		return nil, err
	}
	out := getBuf(int(h.uncompressed))
	if err := decodeLZMA2Into(in[:h.compressed], dict, out); err != nil {
		putBuf(out)
		return nil, err
	}
	var sum hash.Hash
	if newSum != nil {
		sum = newSum()
		sum.Write(out)
	}
	return out, checkTail(in[h.compressed:], padding4(h.size+h.compressed), sum)
}

// checkBytes is a check as xz stores it: CRC32 and CRC64 little-endian
// (Go's Sum gives them big-endian), SHA-256 as it is.
func checkBytes(sum hash.Hash) []byte {
	switch h := sum.(type) {
	case hash.Hash32:
		return binary.LittleEndian.AppendUint32(nil, h.Sum32())
	case hash.Hash64:
		return binary.LittleEndian.AppendUint64(nil, h.Sum64())
	}
	return sum.Sum(nil)
}
