package blocksync

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/internal/eintr"
)

// Direct is a File as DST of a sync that writes around the page cache
// where it can: the granules a sync applies are written with O_DIRECT
// through a second descriptor of the same file or device, from an
// aligned buffer, so that they do not fill the page cache of the host
// that applies them (a sync across hosts, whose other end sent them) and
// so that the read-back that checks them reads the device, not the pages
// just written. What is not aligned (the last granule of an odd size),
// and everything after a filesystem refused O_DIRECT, is written through
// the File as before. Sync is fdatasync: the data and what reading it
// needs (the size), which is all a sync promises.
type Direct struct {
	*File

	mu      sync.Mutex
	fd      int // the O_DIRECT descriptor; -1 when there is none
	bufs    *align.Buffers
	refused bool // O_DIRECT writes failed with EINVAL once: buffered from then on

	DirectBytes, BufferedBytes int64 // what was written each way
}

// directUnit is what O_DIRECT writes are aligned to: a 4096-byte
// logical block, the largest in use, and what 512-byte devices take too.
const directUnit = 4096

// NewDirect wraps f. A file the kernel will not reopen with O_DIRECT
// (tmpfs, some FUSE filesystems) is written through f alone.
func NewDirect(f *File) *Direct {
	d := &Direct{File: f, fd: -1}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", f.f.Fd()), unix.O_WRONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err == nil {
		d.fd = fd
	}
	return d
}

// Direct says whether writes go around the page cache (so far).
func (d *Direct) Direct() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fd >= 0 && !d.refused
}

// WriteAt writes p at off: with O_DIRECT when both are aligned.
func (d *Direct) WriteAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd < 0 || d.refused || off%directUnit != 0 || len(p)%directUnit != 0 || len(p) == 0 {
		return d.buffered(p, off)
	}
	buf, err := d.buffer(len(p))
	if err != nil {
		return d.buffered(p, off)
	}
	copy(buf, p)
	done := 0
	for done < len(p) {
		n, err := eintr.Retry(func() (int, error) { return unix.Pwrite(d.fd, buf[done:len(p)], off+int64(done)) })
		switch {
		case errors.Is(err, unix.EINVAL) && done == 0:
			d.refused = true // the filesystem takes no O_DIRECT here: sticky
			return d.buffered(p, off)
		case err != nil:
			d.DirectBytes += int64(done)
			return done, &OpError{Op: "write", Path: d.path, Offset: off + int64(done), Err: err}
		case n == 0:
			d.DirectBytes += int64(done)
			return done, &OpError{Op: "write", Path: d.path, Offset: off + int64(done), Err: unix.EIO}
		}
		done += n
		if done < len(p) && done%directUnit != 0 {
			// A short count off the block grid: the rest goes buffered.
			d.DirectBytes += int64(done)
			n, err := d.buffered(p[done:], off+int64(done))
			return done + n, err
		}
	}
	d.DirectBytes += int64(done)
	return done, nil
}

func (d *Direct) buffered(p []byte, off int64) (int, error) {
	n, err := d.File.WriteAt(p, off)
	d.BufferedBytes += int64(n)
	return n, err
}

// buffer is the aligned bounce buffer, at least n bytes.
func (d *Direct) buffer(n int) ([]byte, error) {
	if d.bufs == nil || len(d.bufs.Slots[0]) < n {
		if d.bufs != nil {
			d.bufs.Free()
			d.bufs = nil
		}
		b, err := align.AllocBuffers(1, n)
		if err != nil {
			return nil, err
		}
		d.bufs = b
	}
	return d.bufs.Slots[0][:n], nil
}

// Sync makes what was written durable with fdatasync, both descriptors'
// writes alike (they are one file's).
func (d *Direct) Sync() error {
	if err := eintr.RetryErr(func() error { return unix.Fdatasync(int(d.f.Fd())) }); err != nil {
		return &OpError{Op: "fdatasync", Path: d.path, Err: err}
	}
	return nil
}

// Release closes what NewDirect opened; the File stays open, its
// owner's to close.
func (d *Direct) Release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
	if d.bufs != nil {
		d.bufs.Free()
		d.bufs = nil
	}
}

// DropCache drops DST's pages from the page cache (POSIX_FADV_DONTNEED
// drops the clean ones: call it after Sync), so that the reads that
// follow come from the device.
func (d *Direct) DropCache() error {
	if err := unix.Fadvise(int(d.f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return &OpError{Op: "posix_fadvise(DONTNEED)", Path: d.path, Err: err}
	}
	return nil
}
