package unpack

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// XzSize reads how many bytes an xz file decompresses to from the index
// at the end of each of its streams, with a few reads at offsets (a
// ranged HTTP or S3 object, a file): a copy knows its length before it
// decodes a byte, for progress and for DST's room. Streams are walked
// from the last to the first; every footer, index and header met is
// checked.
func XzSize(r io.ReaderAt, size int64) (int64, error) {
	var total int64
	for pos := size; pos > 0; {
		var err error
		if pos, err = skipPaddingBack(r, pos); err != nil {
			return 0, err
		}
		if pos == 0 {
			break
		}
		start, uncompressed, err := xzStreamBack(r, pos)
		if err != nil {
			return 0, err
		}
		total += uncompressed
		pos = start
	}
	return total, nil
}

// skipPaddingBack passes zero words before pos (stream padding).
func skipPaddingBack(r io.ReaderAt, pos int64) (int64, error) {
	var w [4]byte
	for pos >= 4 {
		if _, err := r.ReadAt(w[:], pos-4); err != nil {
			return 0, unexpected(err)
		}
		if w != [4]byte{} {
			return pos, nil
		}
		pos -= 4
	}
	if pos != 0 {
		return 0, corrupt("xz file size is not a multiple of four")
	}
	return 0, nil
}

// xzStreamBack reads the stream that ends at end: its footer, its index,
// its header; it returns where the stream starts and its uncompressed
// size.
func xzStreamBack(r io.ReaderAt, end int64) (start, uncompressed int64, err error) {
	if end < xzHeaderSize+xzFooterSize {
		return 0, 0, corrupt("xz stream too short")
	}
	var f [xzFooterSize]byte
	if _, err := r.ReadAt(f[:], end-xzFooterSize); err != nil {
		return 0, 0, unexpected(err)
	}
	if f[10] != 'Y' || f[11] != 'Z' || crc32.ChecksumIEEE(f[4:10]) != binary.LittleEndian.Uint32(f[:4]) {
		return 0, 0, corrupt("no valid xz stream footer at %d", end-xzFooterSize)
	}
	check, err := xzStreamFlags(f[8:10])
	if err != nil {
		return 0, 0, err
	}
	indexSize := (int64(binary.LittleEndian.Uint32(f[4:8])) + 1) * 4
	indexStart := end - xzFooterSize - indexSize
	if indexStart < xzHeaderSize {
		return 0, 0, corrupt("xz index larger than its stream")
	}
	index := make([]byte, indexSize)
	if _, err := r.ReadAt(index, indexStart); err != nil {
		return 0, 0, unexpected(err)
	}
	if index[0] != 0 {
		return 0, 0, corrupt("no xz index indicator")
	}
	records, n, err := parseXzIndex(bytes.NewReader(index[1:]))
	if err != nil {
		return 0, 0, err
	}
	if n != indexSize {
		return 0, 0, corrupt("xz index is %d bytes, the footer says %d", n, indexSize)
	}
	var blocks int64
	for _, rec := range records {
		blocks += rec.unpadded + padding4(rec.unpadded)
		uncompressed += rec.uncompressed
	}
	start = indexStart - blocks - xzHeaderSize
	if start < 0 {
		return 0, 0, corrupt("xz blocks larger than the file")
	}
	var h [xzHeaderSize]byte
	if _, err := r.ReadAt(h[:], start); err != nil {
		return 0, 0, unexpected(err)
	}
	headerCheck, err := readXzHeader(bytes.NewReader(h[:]))
	if err != nil {
		return 0, 0, err
	}
	if headerCheck != check {
		return 0, 0, corrupt("xz stream header's flags differ from its footer's")
	}
	return start, uncompressed, nil
}
