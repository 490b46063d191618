package blocksync

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Zero makes [off, off+n) read as zeros: a punched hole where the end
// can (fallocate PUNCH_HOLE, which a loop device passes down to its
// backing file), else FALLOC_FL_ZERO_RANGE, else written zeros. A mode
// that fails with EOPNOTSUPP or ENOSYS is not tried again on this end; a
// range a block device cannot punch (EINVAL: not aligned to its logical
// block) is written.
func (e *File) Zero(off, n int64) error {
	if n <= 0 {
		return nil
	}
	for _, m := range []struct {
		mode uint32
		off  *atomicFlag
		name string
	}{
		{unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE, &e.noPunch, "fallocate(PUNCH_HOLE)"},
		{unix.FALLOC_FL_ZERO_RANGE | unix.FALLOC_FL_KEEP_SIZE, &e.noZeroRange, "fallocate(ZERO_RANGE)"},
	} {
		if m.off.Load() {
			continue
		}
		err := unix.Fallocate(int(e.f.Fd()), m.mode, off, n)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
			m.off.Store(true)
		case errors.Is(err, unix.EINVAL):
			// Unaligned on a device, or a mode this end takes only
			// partly: write this range.
		case errors.Is(err, unix.EINTR):
			return e.Zero(off, n)
		default:
			return &OpError{Op: m.name, Path: e.path, Offset: off, Err: err}
		}
	}
	return e.writeZeros(off, n)
}

// writeZeros writes n zero bytes at off.
func (e *File) writeZeros(off, n int64) error {
	buf := make([]byte, min(n, 1<<20))
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := e.WriteAt(buf[:k], off); err != nil {
			return err
		}
		off, n = off+k, n-k
	}
	return nil
}
