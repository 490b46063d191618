package vmdk

import (
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
	"sync"

	"github.com/ringcp/ringcp/internal/inflate"
)

// isData says grain entry e holds bytes to read.
func (im *Image) isData(e uint32) bool { return e != 0 && !(e == 1 && im.zeroGTE) }

// ReadAt reads the guest's bytes at off as io.ReaderAt does (short only
// at the end of the disk, with io.EOF). Grains stored one after another
// are read with one read; compressed grains are inflated here.
func (im *Image) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errNegative
	}
	if off >= im.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), im.size-off)
	for pos, end := off, off+n; pos < end; {
		g := pos / im.grain
		stop := min((g+1)*im.grain, end)
		e := im.entry(g)
		dst := p[pos-off : stop-off]
		switch {
		case !im.isData(e):
			clear(dst)
		case im.compress:
			if err := im.readCompressed(g, e, pos-g*im.grain, dst); err != nil {
				return 0, err
			}
		default:
			// Extend over the grains whose bytes follow in the file.
			host := int64(e)*sector + pos - g*im.grain
			for stop < end && im.isData(im.entry(stop/im.grain)) &&
				int64(im.entry(stop/im.grain))*sector == host+stop-pos {
				stop = min(stop+im.grain, end)
			}
			if err := im.readPlain(p[pos-off:stop-off], host); err != nil {
				return 0, err
			}
		}
		pos = stop
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// readPlain reads stored bytes at host; what lies past the file's end
// reads as zeros.
func (im *Image) readPlain(dst []byte, host int64) error {
	if host >= im.fileSize {
		clear(dst)
		return nil
	}
	if tail := host + int64(len(dst)) - im.fileSize; tail > 0 {
		clear(dst[int64(len(dst))-tail:])
		dst = dst[:int64(len(dst))-tail]
	}
	if n, err := im.t.ReadAt(dst, host); n < len(dst) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("read %s at offset %d: %w", im.name, host+int64(n), err)
	}
	return nil
}

// grainPool holds grain-sized buffers for inflating.
var grainPool sync.Pool

func getGrain(n int64) []byte {
	if b, ok := grainPool.Get().(*[]byte); ok && int64(cap(*b)) >= n {
		return (*b)[:n]
	}
	return make([]byte, n)
}

func putGrain(b []byte) { grainPool.Put(&b) }

// readCompressed inflates grain g, whose marker is at sector e, and
// copies the part at inner into dst.
func (im *Image) readCompressed(g int64, e uint32, inner int64, dst []byte) error {
	at := int64(e) * sector
	// QEMU reads two grains' worth: the compressed data (and its marker)
	// may take more than one.
	raw := getGrain(min(2*im.grain+sector, im.fileSize-at))
	defer putGrain(raw)
	n, err := im.t.ReadAt(raw, at)
	if n < 12 {
		return fmt.Errorf("read %s at offset %d: grain: %w", im.name, at, orEOF(err))
	}
	data := raw[:n]
	if im.stream {
		// The grain marker: the guest sector the grain holds, and the
		// length of the deflate data that follows (12 bytes in all).
		le := binary.LittleEndian
		lba, size := le.Uint64(raw), int64(le.Uint32(raw[8:]))
		// QEMU refuses more than the two grains it reads.
		if lba != uint64(g*im.grain/sector) || size == 0 || size > 2*im.grain || 12+size > int64(n) {
			return &IOError{Name: im.name, Off: at, What: fmt.Sprintf("grain %d: marker for sector %d with %d bytes", g, lba, size)}
		}
		data = raw[12 : 12+size]
	} else {
		// No marker, no length: QEMU gives zlib one grain's bytes.
		data = data[:min(int64(n), im.grain)]
	}
	whole := getGrain(im.grain)
	defer putGrain(whole)
	if err := inflateGrain(whole, data, min(im.grain, im.size-g*im.grain)); err != nil {
		return &IOError{Name: im.name, Off: at, What: fmt.Sprintf("grain %d: inflate", g), Err: err}
	}
	copy(dst, whole[inner:])
	return nil
}

// inflateGrain inflates a grain's zlib stream (RFC 1950) into whole as
// QEMU does, with zlib's uncompress into a grain-sized buffer: the
// stream must end, its Adler-32 right, within data and the grain, and
// hold at least the grain's need bytes on the disk (a last grain may be
// cut at the disk's end; QEMU refuses a read past what inflated).
// Reading up to the grain's end only, as compress/zlib's reader with
// io.ReadFull did, took a grain whose check was wrong or cut, or whose
// stream went on past the grain, as data where qemu-img fails with EIO.
// What follows the Adler-32 is not looked at, as zlib does not.
func inflateGrain(whole, data []byte, need int64) error {
	deflate, err := zlibData(data)
	if err != nil {
		return err
	}
	n, used, err := inflate.DecodeUpTo(whole, deflate)
	if err != nil {
		return err
	}
	if int64(n) < need {
		return fmt.Errorf("%d bytes inflated of %d: %w", n, need, io.ErrUnexpectedEOF)
	}
	sum := deflate[used:]
	if len(sum) < 4 {
		return fmt.Errorf("Adler-32 cut: %w", io.ErrUnexpectedEOF)
	}
	if binary.BigEndian.Uint32(sum) != adler32.Checksum(whole[:n]) {
		return zlib.ErrChecksum
	}
	clear(whole[n:])
	return nil
}

// zlibData is the deflate stream in a grain's zlib framing, after its
// two-byte header, checked as zlib and compress/zlib check it (deflate,
// a window of at most 32 KiB, no preset dictionary).
func zlibData(b []byte) ([]byte, error) {
	if len(b) < 2 {
		return nil, io.ErrUnexpectedEOF
	}
	if b[0]&0x0f != 8 || b[0]>>4 > 7 || (uint(b[0])<<8|uint(b[1]))%31 != 0 {
		return nil, zlib.ErrHeader
	}
	if b[1]&0x20 != 0 {
		return nil, zlib.ErrDictionary
	}
	return b[2:], nil
}

func orEOF(err error) error {
	if err == nil || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// IOError is a grain that cannot be read as its metadata says.
type IOError struct {
	Name string
	Off  int64
	What string
	Err  error
}

func (e *IOError) Error() string {
	s := fmt.Sprintf("%s at offset %d: %s", e.Name, e.Off, e.What)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *IOError) Unwrap() error { return e.Err }

// Data finds the first run of data at or after off, before end:
// [start, stop), start == stop == end when there is none. Unallocated
// and zeroed grains are not data.
func (im *Image) Data(off, end int64) (start, stop int64, err error) {
	end = min(end, im.size)
	if off >= end {
		return end, end, nil
	}
	g := off / im.grain
	last := (end - 1) / im.grain
	for g <= last && !im.isData(im.entry(g)) {
		if im.gd[g/im.perGT] < 0 {
			g = (g/im.perGT + 1) * im.perGT // a whole table of nothing
			continue
		}
		g++
	}
	if g > last {
		return end, end, nil
	}
	start = max(off, g*im.grain)
	for g <= last && im.isData(im.entry(g)) {
		g++
	}
	return start, min(g*im.grain, end), nil
}
