package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/unpack"
	"golang.org/x/sys/unix"
)

// What a dd command line's range is, from what SRC is (a file or device
// of a size, or a stream, /dev/zero, /dev/urandom of none), and what it
// asks of DST.

// sizedRange sets the range of a SRC of known size: skip and count cut
// at its end, with dd's warning for a skip past it.
func (a ddArgs) sizedRange(o *copier.Options, skip, size int64) (warn string, err error) {
	if skip > size {
		warn = ddQuote(a.src) + ": cannot skip to specified offset"
		skip = size
	}
	o.SrcOffset, o.Length = skip, size-skip
	if a.count >= 0 {
		n, err := a.bytes(a.count, a.countBytes, a.ibs, "count")
		if err != nil {
			return warn, err
		}
		o.Length = min(n, o.Length)
	}
	return warn, nil
}

// streamRange sets the range of a stream, /dev/zero or /dev/urandom:
// skip= is read and dropped, count= is the length, and without it the
// copy runs to the stream's end (copier refuses an endless SRC without
// one, unless DST is a device it fills).
func (a ddArgs) streamRange(o *copier.Options, skip int64) error {
	o.SrcOffset, o.LengthSet = skip, a.count >= 0
	if a.has("sync") && !o.LengthSet {
		return &copier.RefusedError{Kind: copier.KindNotSupported, Path: a.src, Reason: "conv=sync would pad the last record of a stream whose length is not known; ringcp copies bytes as they are (give count=)"}
	}
	if !o.LengthSet {
		return nil
	}
	var err error
	o.Length, err = a.bytes(a.count, a.countBytes, a.ibs, "count")
	return err
}

// checkDst applies what depends on DST: excl, nocreat, sparse, sync's
// padding, and where a file DST is cut.
func (a ddArgs) checkDst(length, seek int64) error {
	if a.dst == "-" {
		// Standard output: nothing to create, cut or keep (copier refuses
		// seek= there).
		return a.checkPad(length)
	}
	fi, err := os.Stat(a.dst)
	exists := err == nil
	refuse := func(kind copier.Kind, reason string) error {
		return &copier.RefusedError{Kind: kind, Path: a.dst, Reason: reason}
	}
	switch {
	case a.has("excl") && exists:
		return refuse(copier.KindBadInput, "conv=excl: DST exists")
	case a.has("nocreat") && errors.Is(err, os.ErrNotExist):
		return refuse(copier.KindNotFound, "conv=nocreat: DST does not exist")
	case a.checkPad(length) != nil:
		return a.checkPad(length)
	case a.has("sparse") && exists && fi.Mode()&os.ModeDevice != 0:
		return refuse(copier.KindNotSupported, "conv=sparse on a device: dd leaves the device's old bytes where SRC has zero blocks; ringcp writes the zeros")
	case a.has("sparse") && exists && a.has("notrunc"):
		return refuse(copier.KindNotSupported, "conv=sparse with conv=notrunc: dd leaves DST's old bytes where SRC has zero blocks; ringcp writes the zeros")
	case exists && fi.Mode().IsRegular() && fi.Size() > 0 && seek > 0 && seek < a.obs && !a.has("notrunc"):
		// dd opens DST with O_TRUNC unless it seeks whole records, so
		// its bytes before seek become a hole: ringcp keeps them.
		return refuse(copier.KindNotSupported, fmt.Sprintf("seek=%dB, less than one output record (obs=%d), without conv=notrunc: GNU dd empties DST here, before seek too; give conv=notrunc, or seek in records", seek, a.obs))
	}
	return nil
}

// checkPad refuses conv=sync where it would pad (a stream's length is
// its count=, or unknown: it might).
func (a ddArgs) checkPad(length int64) error {
	if a.has("sync") && length%a.ibs != 0 {
		return &copier.RefusedError{Kind: copier.KindNotSupported, Path: a.dst, Reason: fmt.Sprintf("conv=sync would pad the last %d bytes to a whole record of %d; ringcp copies bytes as they are", length%a.ibs, a.ibs)}
	}
	return nil
}

// sourceEnd is SRC's size, so that count and skip can be cut to it as dd
// cuts them at end of file. Only regular files and block devices are
// opened to learn it (standard input too, when it is one); a stream or
// a character device has none (known false), and Prepare says whether
// it can be copied; for anything else Prepare says what is wrong.
// formatted says SRC is read through its format (guestEnd).
func (a ddArgs) sourceEnd() (size int64, known, formatted bool, err error) {
	path := a.src
	if a.src == "-" {
		path = "/dev/stdin"
	}
	var st unix.Stat_t
	err = unix.Stat(path, &st)
	switch {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG:
		size, known, formatted = a.guestEnd(st.Size)
		return size, known, formatted, nil
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK:
		f, err := os.Open(path)
		if err == nil {
			defer f.Close()
			if end, err := f.Seek(0, io.SeekEnd); err == nil {
				size, known, formatted = a.guestEnd(end)
				return size, known, formatted, nil
			}
		}
	case a.src == "-", err == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO, err == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR:
		return 0, false, false, nil
	}
	if _, perr := copier.Prepare(copier.Options{Src: a.src, Dst: a.src, SrcFormat: a.iformat}); perr != nil {
		return 0, true, false, perr
	}
	return 0, true, false, &copier.RefusedError{Kind: copier.KindCheckFailed, Path: a.src, Field: "Src", Reason: "cannot tell its size"}
}

// guestEnd is the size the copy reads of a file or device SRC of size
// bytes: a disk image's (qcow2, sparse vmdk) is its guest's, which the
// image file's size says nothing of (a sparse image's file is smaller,
// a full one's larger), so skip= and count= are cut at the guest's end
// as the copy reads it. Compressed data whose format does not say its
// size (zstd, gzip, bzip2; xz's index does) has none before its end
// (known false): it is read as a stream is. formatted: SRC is read
// through its format, not as its bytes (a size that is not the file's,
// or none), which GNU dd would copy as they are (iformat=raw). A SRC
// the copier refuses keeps its size: the copy's own Prepare then
// refuses it.
func (a ddArgs) guestEnd(size int64) (end int64, known, formatted bool) {
	p, err := copier.Prepare(copier.Options{Src: a.src, Dst: os.DevNull, SrcFormat: a.iformat})
	if err != nil {
		return size, true, false
	}
	defer p.Close()
	return p.Length, p.SizeKnown(), !p.SizeKnown() || p.Length != size
}

// packedEnd learns where a file's compressed data (gzip, zstd and
// bzip2 do not say their size before their end) ends, when
// skip= or count= may reach past it, so that they are cut there as dd
// cuts them at end of file: it decodes up to the range's end (skip plus
// count, or skip without count), as the copy reads to it, and gives the
// size when the data ended first (known true). The copy then reads the
// range again and checks the data to its end. Otherwise, or when the
// data cannot be decoded (the copy says why), SRC is read as a stream.
// Before, count= past the end failed the copy ("source ended early"),
// and skip= past it too, though dd copies to the end, or warns and
// copies nothing.
func (a ddArgs) packedEnd(skip int64) (size int64, known bool) {
	limit := skip
	if a.count >= 0 {
		n, err := a.bytes(a.count, a.countBytes, a.ibs, "count")
		if err != nil || n > math.MaxInt64-skip {
			return 0, false
		}
		limit += n
	}
	var st unix.Stat_t
	switch {
	case a.src == "-", limit == 0: // standard input is read once
		return 0, false
	case unix.Stat(a.src, &st) != nil:
		return 0, false
	case st.Mode&unix.S_IFMT != unix.S_IFREG && st.Mode&unix.S_IFMT != unix.S_IFBLK:
		return 0, false
	}
	f, err := os.Open(a.src)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	r, err := unpack.NewReader(f, unpack.Options{})
	if err != nil {
		return 0, false
	}
	defer r.Close()
	if r.Format() == unpack.Raw {
		return 0, false
	}
	n, err := io.CopyN(io.Discard, r, limit)
	if errors.Is(err, io.EOF) { // CopyN's word for an end before limit; a cut stream's is ErrUnexpectedEOF
		return n, true
	}
	return 0, false
}
