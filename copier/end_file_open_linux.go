package copier

import (
	"fmt"
	"io"
	"os"

	"github.com/ringcp/ringcp/guard"
	"golang.org/x/sys/unix"
)

// open opens the file or device to be read (SRC, or an end of Compare):
// read-only, with the O_DIRECT Prepare chose, checked to be what Prepare
// inspected.
func (f *fileEnd) open(p *Plan, rep *Report) (*held, error) {
	ep := f.ep
	file, err := openAs(ep.path, ep.path, os.O_RDONLY|unix.O_NONBLOCK|directFlag(ep.direct), 0)
	if err != nil {
		return nil, err
	}
	if err := f.checkOpened(file); err != nil {
		file.Close()
		return nil, err
	}
	if err := f.checkGrown(p, file); err != nil {
		file.Close()
		return nil, err
	}
	// Before the first read: what a write changes must be as it is now
	// when the copy or the read pass ends (srcchanged_linux.go).
	w, err := watchSrc(file, ep.path, ep.geo.Size, ep.role.tag()+" "+ep.path)
	if err != nil {
		file.Close()
		return nil, refuseErr(KindCheckFailed, ep.path, "cannot tell what it is", err).on(ep.role.field())
	}
	return &held{f: file, align: ep.alignment(), release: func() { w.close(); file.Close() }, unchanged: unchangedAll(w)}, nil
}

// checkGrown refuses a SRC file that grew since Prepare measured it when
// the copy was to take all of it (no Options.Length, the range ending at
// its end then): the range is Prepare's, and the copy would complete a
// DST short of SRC. Its marks are taken after this, so the check at the
// end sees nothing. One cut short fails its read (ErrSourceShrank).
func (f *fileEnd) checkGrown(p *Plan, file *os.File) error {
	if f.ep != p.src || f.isBlock || p.opts.Length != 0 || p.opts.SrcOffset+p.Length != f.st.Size {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(file.Fd()), &st); err != nil {
		return &os.PathError{Op: "fstat", Path: f.ep.path, Err: err}
	}
	if st.Size <= f.st.Size {
		return nil
	}
	return refuse(KindChanged, f.ep.path, fmt.Sprintf("grew from %d to %d bytes between checking and opening it: the copy would end short of it; run it again", f.st.Size, st.Size)).on(f.ep.role.field())
}

// srcData is SRC's data extents in the range (SEEK_DATA/SEEK_HOLE; a
// device is all data), read from a descriptor of its own, which also
// counts zero blocks.
func (f *fileEnd) srcData(p *Plan) (srcData, error) {
	o := &p.opts
	file, err := os.OpenFile(f.ep.path, inspectFlags, 0)
	if err != nil {
		return srcData{}, err
	}
	ext := guard.Extents{{Off: o.SrcOffset, N: p.Length}}
	if !f.isBlock {
		if ext, err = guard.DataExtents(int(file.Fd()), o.SrcOffset, o.SrcOffset+p.Length); err != nil {
			// The filesystem cannot map holes (EINVAL on some FUSE and
			// network filesystems): the engine reads it all as data too.
			ext = guard.Extents{{Off: o.SrcOffset, N: p.Length}}
		}
	}
	return srcData{ext: ext, read: file, close: func() { file.Close() }}, nil
}

// space: a file DST takes space on its filesystem, less what it gives back:
// all its blocks when it is cut, at most the range's length of them when
// it is overwritten in place (preallocated blocks read as holes to
// SEEK_DATA, so its block count is the honest bound). A device takes
// none.
func (f *fileEnd) space(p *Plan) (dstSpace, bool) {
	if f.isBlock {
		return dstSpace{}, false
	}
	fs, ok := f.fsDev()
	if !ok {
		return dstSpace{}, false
	}
	r := dstSpace{fs: fs, at: f.fsPath()}
	if f.ep.exists {
		r.reclaimed = guard.Allocated(&f.st)
		if !p.truncate {
			r.reclaimed = min(r.reclaimed, p.Length)
		}
	}
	return r, true
}

// readerAt: a file or device is read through a descriptor of its own,
// as Prepare opens every end: read-only and non-blocking.
func (f *fileEnd) readerAt() (io.ReaderAt, int64, func(), error) {
	file, err := os.OpenFile(f.ep.path, inspectFlags, 0)
	if err != nil {
		return nil, 0, nil, err
	}
	return file, f.ep.geo.Size, func() { file.Close() }, nil
}
