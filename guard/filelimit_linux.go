package guard

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// FileLimit says whether a file on the filesystem of at (an existing
// regular file, or the folder a new one is to be made in) may be end
// bytes long; when not, limit is the longest it may be. That limit is the
// filesystem's s_maxbytes (16 TiB - 4 KiB on ext4 with 4 KiB blocks, 8
// EiB on XFS and btrfs), which a write past it meets as EFBIG. It is not
// in statfs, but lseek(SEEK_SET) refuses a position past it with EINVAL
// (vfs_setpos), on a read-only descriptor of the file or, for a folder, on
// an unnamed O_TMPFILE inode in it, which vanishes on close. ok is true
// when neither can be opened: nothing is known.
func FileLimit(at string, end int64) (limit int64, ok bool) {
	f, err := openForLimit(at)
	if err != nil {
		return 0, true
	}
	defer f.Close()
	fd := int(f.Fd())
	if seekable(fd, end) {
		return 0, true
	}
	return maxPosition(fd, end), false
}

func openForLimit(at string) (*os.File, error) {
	if fi, err := os.Stat(at); err == nil && fi.IsDir() {
		return os.OpenFile(at, unix.O_TMPFILE|os.O_WRONLY|unix.O_CLOEXEC, 0o600)
	}
	return os.OpenFile(at, lookFlags, 0)
}

// seekable says whether fd's file may have a byte at position pos-1, that
// is be pos bytes long: any answer but EINVAL counts as yes.
func seekable(fd int, pos int64) bool {
	_, err := unix.Seek(fd, pos, unix.SEEK_SET)
	return !errors.Is(err, unix.EINVAL)
}

// maxPosition finds the largest seekable position below hi by bisection:
// 63 lseek calls at most.
func maxPosition(fd int, hi int64) int64 {
	lo := int64(0) // seekable; hi is not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if seekable(fd, mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
