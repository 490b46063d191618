package engine

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// FileEnd is a regular file or block device reached through its
// descriptor: SEEK_DATA and SEEK_HOLE, fdatasync, fallocate, ftruncate and
// F_SETFL (the system calls of sys_linux.go).
type FileEnd struct{ F *os.File }

var _ Endpoint = FileEnd{}

// Name is the path the file was opened by.
func (e FileEnd) Name() string { return e.F.Name() }

func (e FileEnd) fd() int { return int(e.F.Fd()) }

// Data asks SEEK_DATA, then SEEK_HOLE. SEEK_DATA's ENXIO (no data after
// off) is trusted only while the file still reaches end: a SRC truncated
// under the copy would otherwise be copied as zeros.
func (e FileEnd) Data(off, end int64) (int64, int64, error) {
	start, err := seekData(e.fd(), off)
	switch {
	case errors.Is(err, syscall.ENXIO):
		return end, end, e.reaches(end)
	case err != nil:
		// EINVAL on some FUSE and network filesystems.
		return 0, 0, fmt.Errorf("%w: SEEK_DATA: %w", ErrCannotMap, err)
	case start >= end:
		return end, end, nil
	}
	stop := end
	if h, err := seekHole(e.fd(), start); err == nil {
		stop = min(h, end)
	}
	return start, stop, nil
}

// reaches fails with ErrSourceShrank when a regular file ends before end.
func (e FileEnd) reaches(end int64) error {
	size, regular, err := fileSize(e.fd())
	if err != nil {
		return &OpError{Op: "stat", Path: e.Name(), Err: err}
	}
	if regular && size < end {
		return &OpError{Op: "read", Path: e.Name(), Offset: size, Err: ErrSourceShrank}
	}
	return nil
}

// Settle is fdatasync, which works on a read-only descriptor too.
func (e FileEnd) Settle() error { return fdatasync(e.fd()) }

// Reserve is fallocate, mode 0 or FALLOC_FL_KEEP_SIZE.
func (e FileEnd) Reserve(off, n int64, keepSize bool) error {
	mode := uint32(0)
	if keepSize {
		mode = fallocKeepSize
	}
	return fallocate(e.fd(), mode, off, n)
}

// Unreserve is fallocate(PUNCH_HOLE), which keeps the size.
func (e FileEnd) Unreserve(off, n int64) error {
	return fallocate(e.fd(), fallocPunchHole|fallocKeepSize, off, n)
}

var _ Unreserver = FileEnd{}

// Truncate is ftruncate.
func (e FileEnd) Truncate(size int64) error { return ftruncate(e.fd(), size) }

// PrepareTail clears O_DIRECT on the open file description with F_SETFL,
// as GNU dd does for its last partial block (see Job.bufferTail).
func (e FileEnd) PrepareTail() error { return clearDirect(e.fd()) }
