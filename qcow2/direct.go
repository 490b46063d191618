package qcow2

import (
	"errors"
	"io"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Reads that bypass the page cache: a data run read whole into memory
// aligned as O_DIRECT wants it, at a host offset and of a length that
// are multiples of the alignment, goes through an O_DIRECT view of the
// data file when the caller gives one (SetDirect), as qemu-img convert
// -T none reads. A copy then moves the image's data as it moves a raw
// file's: large reads straight into its buffers, at the depth it keeps
// in flight, without the page cache's copy nor its readahead in
// between. Everything else (the tables, compressed clusters, pieces of
// clusters, a backing file) is read through the Transport.

// directView is the O_DIRECT view and its alignment; off is set when the
// file refused an O_DIRECT read (EINVAL: a filesystem or a device that
// wants another alignment), and stays so.
type directView struct {
	r     io.ReaderAt
	align int64
	off   atomic.Bool
}

// SetDirect gives the image an O_DIRECT view of the file its clusters
// are in (the image file itself, or its external data file), whose
// reads must be aligned to align bytes (offset, length and memory). It
// must be called before the reads, not during them.
func (im *Image) SetDirect(r io.ReaderAt, align int64) {
	if align <= 0 || align&(align-1) != 0 {
		return
	}
	im.direct = &directView{r: r, align: align}
}

// readData reads a data run's host bytes at host into dst.
func (im *Image) readData(dst []byte, host int64) error {
	d := im.direct
	if d == nil || d.off.Load() || !d.fits(dst, host) || host+int64(len(dst)) > im.dataSize {
		return readClipped(im.data, dst, host, im.dataSize)
	}
	n, err := d.r.ReadAt(dst, host)
	if n == len(dst) {
		return nil
	}
	if n == 0 && errors.Is(err, syscall.EINVAL) {
		d.off.Store(true) // not this file's alignment after all: as before
		return readClipped(im.data, dst, host, im.dataSize)
	}
	return readClipped(im.data, dst[n:], host+int64(n), im.dataSize)
}

// fits says dst and host are aligned for the view.
func (d *directView) fits(dst []byte, host int64) bool {
	a := d.align
	return len(dst) > 0 && host%a == 0 && int64(len(dst))%a == 0 &&
		uintptr(unsafe.Pointer(unsafe.SliceData(dst)))%uintptr(a) == 0
}

// readCompressed reads the image file's bytes [start, end), where
// compressed clusters are, into a pooled buffer, and says how to give
// it back. Through the O_DIRECT view when there is one (QEMU keeps
// compressed clusters in the image file, never in a data file), the
// span widened to the view's alignment: a page-cache read costs a copy
// of every byte and, from several workers at once on one file, the
// readahead that one reader in order would get (measured: 8 workers
// reading a zstd image through the page cache were no faster than one).
func (im *Image) readCompressed(start, end int64) ([]byte, func(), error) {
	d := im.direct
	if d == nil || d.off.Load() || im.extData {
		buf := getBuf(int(end - start))
		if err := readFull(im.t, buf, start); err != nil {
			putBuf(buf)
			return nil, nil, err
		}
		return buf, func() { putBuf(buf) }, nil
	}
	a := d.align
	as, ae := start-start%a, (end+a-1)/a*a
	whole := getBuf(int(ae-as) + int(a))
	release := func() { putBuf(whole) }
	skip := (a - int64(uintptr(unsafe.Pointer(unsafe.SliceData(whole))))%a) % a
	buf := whole[skip : skip+ae-as]
	n, err := d.r.ReadAt(buf, as)
	if n == 0 && errors.Is(err, syscall.EINVAL) {
		d.off.Store(true) // not this file's alignment after all: as before
	}
	// What O_DIRECT did not bring (past the file's end, or after an
	// error), the page cache does.
	if got := max(int64(n), start-as); got < end-as {
		if err := readFull(im.t, buf[got:end-as], as+got); err != nil {
			release()
			return nil, nil, err
		}
	}
	return buf[start-as : end-as], release, nil
}
