package blocksync

import (
	"errors"
	"io"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/internal/eintr"
)

// ReadAt reads p at off: with O_DIRECT when off, len(p) and p's memory
// are aligned (a sync's windows of DST, its read-backs), else through
// the File. A sync across hosts reads all of DST once to digest it: read
// through the page cache, that was a copy of every byte out of it (a
// tenth of the serving side's CPU), and a DST the size of the host's
// memory pushed everything else out of it. An O_DIRECT read first writes
// back what the page cache holds dirty in its range (the buffered
// writes of unaligned granules), so it reads what was written either
// way. It is safe for several goroutines.
func (d *Direct) ReadAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	fd, no := d.fd, d.noRead
	d.mu.Unlock()
	if fd < 0 || no || off%directUnit != 0 || len(p)%directUnit != 0 || len(p) == 0 ||
		uintptr(unsafe.Pointer(unsafe.SliceData(p)))%directUnit != 0 {
		return d.File.ReadAt(p, off)
	}
	done := 0
	defer func() { d.count(&d.DirectReadBytes, done) }()
	for done < len(p) {
		n, err := eintr.Retry(func() (int, error) { return unix.Pread(fd, p[done:], off+int64(done)) })
		switch {
		case errors.Is(err, unix.EINVAL) && done == 0:
			d.mu.Lock()
			d.noRead = true // the filesystem takes no O_DIRECT reads here: sticky
			d.mu.Unlock()
			return d.File.ReadAt(p, off)
		case err != nil:
			return done, &OpError{Op: "read", Path: d.path, Offset: off + int64(done), Err: err}
		case n == 0:
			return done, io.EOF
		}
		done += n
		if done < len(p) && done%directUnit != 0 {
			// The end of a file whose size is off the block grid: the
			// rest (nothing, or what it grew by since) through the File.
			k, err := d.File.ReadAt(p[done:], off+int64(done))
			return done + k, err
		}
	}
	return done, nil
}
