package engine

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// FileEnd is a regular file or block device reached through its
// descriptor: SEEK_DATA and SEEK_HOLE, fdatasync, fallocate, ftruncate and
// F_SETFL.
type FileEnd struct{ F *os.File }

var _ Endpoint = FileEnd{}

// Name is the path the file was opened by.
func (e FileEnd) Name() string { return e.F.Name() }

func (e FileEnd) fd() int { return int(e.F.Fd()) }

// Data asks SEEK_DATA, then SEEK_HOLE. SEEK_DATA's ENXIO (no data after
// off) is trusted only while the file still reaches end: a SRC truncated
// under the copy would otherwise be copied as zeros.
func (e FileEnd) Data(off, end int64) (int64, int64, error) {
	start, err := unix.Seek(e.fd(), off, unix.SEEK_DATA)
	switch {
	case errors.Is(err, unix.ENXIO):
		return end, end, e.reaches(end)
	case err != nil:
		// EINVAL on some FUSE and network filesystems.
		return 0, 0, fmt.Errorf("%w: SEEK_DATA: %w", ErrCannotMap, err)
	case start >= end:
		return end, end, nil
	}
	stop := end
	if h, err := unix.Seek(e.fd(), start, unix.SEEK_HOLE); err == nil {
		stop = min(h, end)
	}
	return start, stop, nil
}

// reaches fails with ErrSourceShrank when a regular file ends before end.
func (e FileEnd) reaches(end int64) error {
	var st unix.Stat_t
	if err := unix.Fstat(e.fd(), &st); err != nil {
		return &OpError{Op: "stat", Path: e.Name(), Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size < end {
		return &OpError{Op: "read", Path: e.Name(), Offset: st.Size, Err: ErrSourceShrank}
	}
	return nil
}

// Settle is fdatasync, which works on a read-only descriptor too.
func (e FileEnd) Settle() error { return unix.Fdatasync(e.fd()) }

// Reserve is fallocate, mode 0 or FALLOC_FL_KEEP_SIZE.
func (e FileEnd) Reserve(off, n int64, keepSize bool) error {
	mode := uint32(0)
	if keepSize {
		mode = unix.FALLOC_FL_KEEP_SIZE
	}
	return unix.Fallocate(e.fd(), mode, off, n)
}

// Truncate is ftruncate.
func (e FileEnd) Truncate(size int64) error { return unix.Ftruncate(e.fd(), size) }

// PrepareTail clears O_DIRECT on the open file description with F_SETFL,
// as GNU dd does for its last partial block (see Job.bufferTail).
func (e FileEnd) PrepareTail() error {
	flags, err := unix.FcntlInt(uintptr(e.fd()), unix.F_GETFL, 0)
	if err != nil || flags&unix.O_DIRECT == 0 {
		return err
	}
	_, err = unix.FcntlInt(uintptr(e.fd()), unix.F_SETFL, flags&^unix.O_DIRECT)
	return err
}
