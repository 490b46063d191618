package copier

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// checkFileLimit refuses a copy that would end past the largest file DST's
// filesystem allows (its s_maxbytes: 16 TiB - 4 KiB on ext4 with 4 KiB
// blocks, 8 EiB on XFS and btrfs), before the write that gets EFBIG.
// s_maxbytes is not in statfs, but lseek(SEEK_SET) refuses a position past
// it with EINVAL (vfs_setpos), on a read-only descriptor of DST or, for a
// new DST, on an unnamed O_TMPFILE inode in its folder, which vanishes on
// close. Where neither works, the overflow checks of checkRange remain.
func (p *Plan) checkFileLimit() error {
	if p.dst.isBlock {
		return nil // checkDestSize compares with the device's size
	}
	end := p.opts.DstOffset + p.Length
	f, err := p.openForLimit()
	if err != nil {
		return nil
	}
	defer f.Close()
	fd := int(f.Fd())
	if seekable(fd, end) {
		return nil
	}
	return refuse(p.opts.Dst, fmt.Sprintf("the copy would end at byte %d, past the largest file DST's filesystem allows (%d bytes)", end, maxPosition(fd, end)))
}

func (p *Plan) openForLimit() (*os.File, error) {
	if p.dst.exists {
		return os.OpenFile(p.dst.path, inspectFlags, 0)
	}
	return os.OpenFile(filepath.Dir(p.dst.path), unix.O_TMPFILE|os.O_WRONLY|unix.O_CLOEXEC, 0o600)
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
