package unpack

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// xzIndexCap is the most XzSize reads of one stream's index, whatever
// the file's size: the footer may say up to 16 GiB, and the index is read
// whole. 64 MiB lists some 10 million blocks: a 1 TiB image cut into
// blocks of 100 KiB, when xz -T makes blocks of 3 times the dictionary
// (3 MiB at -1, 24 MiB at -6).
const xzIndexCap = 64 << 20

// xzIndexFloor is what any stream's index may take beside its records:
// the indicator, the count, padding and the CRC32.
const xzIndexFloor = 64 << 10

// xzIndexMost is the largest index a stream ending at end may have: a
// record (two integers) is never larger than half the block it describes
// (at least 12 bytes: a header, data, padding), so no index takes more
// than half the bytes before it, and the fixed part; at most xzIndexCap.
func xzIndexMost(end int64) int64 {
	return min(xzIndexCap, end/2+xzIndexFloor)
}

// IndexTooLargeError is an xz index larger than XzSize reads: a hostile
// or damaged footer (whose claim would have the reader hold it all), or
// an image of more blocks than ringcp sizes ahead.
type IndexTooLargeError struct {
	Size, Most, At int64
}

func (e *IndexTooLargeError) Error() string {
	return fmt.Sprintf("xz index of %d bytes at offset %d: more than the %d bytes ringcp reads of one (a damaged or hostile file, or one of millions of blocks: recompress it with fewer, larger blocks)", e.Size, e.At, e.Most)
}

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

// skipPaddingBack passes the zero words before pos (stream padding). It
// reads backwards in windows that double, from 4 KiB to 1 MiB: over HTTP
// every read is a round trip, and padding may be long (a file written to
// a device in whole blocks).
func skipPaddingBack(r io.ReaderAt, pos int64) (int64, error) {
	end := pos
	for window := int64(4 << 10); pos > 0; window = min(2*window, 1<<20) {
		w := make([]byte, min(pos, window))
		if n, err := r.ReadAt(w, pos-int64(len(w))); n < len(w) {
			return 0, unexpected(firstErr(err))
		}
		if i := lastNonZero(w); i >= 0 {
			zeros := end - (pos - int64(len(w)) + int64(i) + 1)
			return end - zeros/4*4, nil
		}
		pos -= int64(len(w))
	}
	if end%4 != 0 {
		return 0, corrupt("xz file size is not a multiple of four")
	}
	return 0, nil
}

// lastNonZero is the index of the last byte of b that is not zero, or -1.
func lastNonZero(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0 {
			return i
		}
	}
	return -1
}

// firstErr is err, or io.EOF for a short read that said nothing.
func firstErr(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
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
	if most := xzIndexMost(end); indexSize > most {
		return 0, 0, &IndexTooLargeError{Size: indexSize, Most: most, At: indexStart}
	}
	index := make([]byte, indexSize)
	if _, err := r.ReadAt(index, indexStart); err != nil {
		return 0, 0, unexpected(err)
	}
	if index[0] != 0 {
		return 0, 0, corrupt("no xz index indicator")
	}
	var blocks int64
	_, n, err := parseXzIndex(bytes.NewReader(index[1:]), func(_ uint64, rec xzRecord) error {
		blocks += rec.unpadded + padding4(rec.unpadded)
		uncompressed += rec.uncompressed
		if blocks > indexStart || uncompressed > 1<<62 {
			return corrupt("xz index lists more than its stream holds")
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if n != indexSize {
		return 0, 0, corrupt("xz index is %d bytes, the footer says %d", n, indexSize)
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
