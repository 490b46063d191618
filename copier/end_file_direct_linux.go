package copier

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ringcp/ringcp/align"
	"golang.org/x/sys/unix"
)

// directObstacle says what keeps the end from O_DIRECT when the copy
// starts at off, or "".
func (f *fileEnd) directObstacle(p *Plan, off int64) string {
	ep := f.ep
	a := int64(ep.geo.DirectAlign())
	switch {
	case !ep.geo.DirectSupported:
		return "the filesystem does not support O_DIRECT"
	case !align.IsAligned(off, a):
		return fmt.Sprintf("offset %d is not a multiple of the alignment %d", off, a)
	case p.opts.Direct != DirectAuto && p.opts.BlockSize != 0 && !align.IsAligned(int64(p.opts.BlockSize), a):
		// Direct auto rounds an asked block size to the alignment
		// (sizing.askedBlock) instead.
		return fmt.Sprintf("block size %d is not a multiple of the alignment %d", p.opts.BlockSize, a)
	case off+p.Length > math.MaxInt64-(a-1):
		// An O_DIRECT read of the unaligned last block is rounded up to
		// the alignment, past the largest offset the kernel takes.
		return fmt.Sprintf("the range ends within %d bytes of the largest file offset", a)
	}
	if err := f.tryDirect(); err != nil {
		return fmt.Sprintf("O_DIRECT open failed (%v)", err)
	}
	return ""
}

// tryDirect opens the end with O_DIRECT to learn whether the filesystem
// takes it (tmpfs before 6.6 and some FUSE mounts answer EINVAL).
func (f *fileEnd) tryDirect() error {
	var file *os.File
	var err error
	ep := f.ep
	if ep.exists {
		// inspectFlags' O_NONBLOCK: the path may be a FIFO by now.
		file, err = os.OpenFile(ep.path, inspectFlags|unix.O_DIRECT, 0)
		if err == nil {
			defer file.Close()
			return f.checkSame(file)
		}
	} else {
		file, err = os.OpenFile(filepath.Dir(ep.path), unix.O_TMPFILE|os.O_WRONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
		if err != nil && f.creation == newTemp {
			return nil // no O_TMPFILE to test with: DST is switched to O_DIRECT after its creation, where that works
		}
	}
	if err != nil {
		return err
	}
	return file.Close()
}
