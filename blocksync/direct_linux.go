package blocksync

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

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
	fd      int              // the O_DIRECT descriptor; -1 when there is none
	bufs    []*align.Buffers // free bounce buffers, one per write in flight at most
	refused bool             // O_DIRECT writes failed with EINVAL once: buffered from then on
	noRead  bool             // O_DIRECT reads failed with EINVAL once: through the File from then on

	DirectBytes, BufferedBytes int64 // what was written each way
	DirectReadBytes            int64 // what was read with O_DIRECT
}

// directUnit is what O_DIRECT writes are aligned to: a 4096-byte
// logical block, the largest in use, and what 512-byte devices take too.
const directUnit = 4096

// NewDirect wraps f. A file the kernel will not reopen with O_DIRECT
// (tmpfs, some FUSE filesystems) is written and read through f alone.
func NewDirect(f *File) *Direct {
	d := &Direct{File: f, fd: -1}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", f.f.Fd()), unix.O_RDWR|unix.O_DIRECT|unix.O_CLOEXEC, 0)
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

// WriteAt writes p at off: with O_DIRECT when both are aligned. It is
// safe for several goroutines writing ranges that do not overlap (a
// sync across hosts applies its changes so): p is written in place when
// its memory is aligned too, else copied to a bounce buffer of the
// call's own; no lock is held across the write.
func (d *Direct) WriteAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	fd, refused := d.fd, d.refused
	d.mu.Unlock()
	if fd < 0 || refused || off%directUnit != 0 || len(p)%directUnit != 0 || len(p) == 0 {
		return d.buffered(p, off)
	}
	buf, put, err := d.aligned(p)
	if err != nil {
		return d.buffered(p, off)
	}
	defer put()
	done := 0
	for done < len(p) {
		n, err := eintr.Retry(func() (int, error) { return unix.Pwrite(fd, buf[done:], off+int64(done)) })
		switch {
		case errors.Is(err, unix.EINVAL) && done == 0:
			d.mu.Lock()
			d.refused = true // the filesystem takes no O_DIRECT here: sticky
			d.mu.Unlock()
			return d.buffered(p, off)
		case err != nil:
			d.count(&d.DirectBytes, done)
			return done, &OpError{Op: "write", Path: d.path, Offset: off + int64(done), Err: err}
		case n == 0:
			d.count(&d.DirectBytes, done)
			return done, &OpError{Op: "write", Path: d.path, Offset: off + int64(done), Err: unix.EIO}
		}
		done += n
		if done < len(p) && done%directUnit != 0 {
			// A short count off the block grid: the rest goes buffered.
			d.count(&d.DirectBytes, done)
			n, err := d.buffered(p[done:], off+int64(done))
			return done + n, err
		}
	}
	d.count(&d.DirectBytes, done)
	return done, nil
}

// count adds n to one of d's byte counts.
func (d *Direct) count(c *int64, n int) {
	d.mu.Lock()
	*c += int64(n)
	d.mu.Unlock()
}

// aligned is p itself when its memory is aligned for O_DIRECT, else a
// copy of it in a bounce buffer; put gives the buffer back.
func (d *Direct) aligned(p []byte) (buf []byte, put func(), err error) {
	if uintptr(unsafe.Pointer(unsafe.SliceData(p)))%directUnit == 0 {
		return p, func() {}, nil
	}
	b, err := d.buffer(len(p))
	if err != nil {
		return nil, nil, err
	}
	copy(b.Slots[0], p)
	return b.Slots[0][:len(p)], func() { d.putBuffer(b) }, nil
}

func (d *Direct) buffered(p []byte, off int64) (int, error) {
	n, err := d.File.WriteAt(p, off)
	d.count(&d.BufferedBytes, n)
	return n, err
}

// buffer is a free aligned bounce buffer of at least n bytes: one kept
// from an earlier write when it is large enough, else a new one.
func (d *Direct) buffer(n int) (*align.Buffers, error) {
	d.mu.Lock()
	for i, b := range d.bufs {
		if len(b.Slots[0]) >= n {
			d.bufs = append(d.bufs[:i], d.bufs[i+1:]...)
			d.mu.Unlock()
			return b, nil
		}
	}
	d.mu.Unlock()
	return align.AllocBuffers(1, n)
}

// putBuffer keeps b for the next write, or frees it when d was released
// meanwhile.
func (d *Direct) putBuffer(b *align.Buffers) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd < 0 {
		b.Free()
		return
	}
	d.bufs = append(d.bufs, b)
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
// owner's to close. Call it once no WriteAt is running.
func (d *Direct) Release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
	for _, b := range d.bufs {
		b.Free()
	}
	d.bufs = nil
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
