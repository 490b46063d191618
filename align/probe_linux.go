package align

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Probe reports the geometry of an open file or block device. f may be
// opened with or without O_DIRECT; Probe only stats it, asks the block
// layer (ioctls) and reads sysfs. Path is f.Name().
//
// The error is an *os.PathError wrapping the errno, and only for what
// Probe cannot do without: stat'ing f, and BLKGETSIZE64 on a block
// device. Missing hints become 0 or a safe default, noted in Notes.
func Probe(f *os.File) (Geometry, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return Geometry{}, &os.PathError{Op: "probe", Path: f.Name(), Err: err}
	}
	var g Geometry
	var perr error
	// Control, not f.Fd(): Fd would switch a non-blocking descriptor to
	// blocking mode as a side effect.
	err = rc.Control(func(fd uintptr) { g, perr = probeFd(int(fd), f.Name()) })
	if err != nil {
		// Control fails only when f is closed or closing, with an
		// internal/poll error that errors.Is does not match to
		// os.ErrClosed; report the public one.
		return Geometry{}, &os.PathError{Op: "probe", Path: f.Name(), Err: os.ErrClosed}
	}
	return g, perr
}

// statInfo is the part of statx (or fstat) that Probe uses.
type statInfo struct {
	how       string // "statx" or "fstat", for notes
	mode      uint32
	size      int64
	dev, rdev devNum
	dio       bool // STATX_DIOALIGN is in the returned mask
	dioMem    int
	dioOffset int
}

// statFd stats fd with statx, asking for STATX_DIOALIGN (Linux 6.1+ for
// files, 6.11+ for block devices). It falls back to fstat when statx
// itself is refused: ENOSYS before Linux 4.11 and in some sandboxes
// (gVisor), EPERM under old seccomp profiles that predate statx.
func statFd(fd int, name string) (statInfo, error) {
	var sx unix.Statx_t
	mask := unix.STATX_TYPE | unix.STATX_SIZE | unix.STATX_DIOALIGN
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, mask, &sx)
	if err == nil {
		return statInfo{
			how:       "statx",
			mode:      uint32(sx.Mode),
			size:      int64(sx.Size),
			dev:       devNum{sx.Dev_major, sx.Dev_minor},
			rdev:      devNum{sx.Rdev_major, sx.Rdev_minor},
			dio:       sx.Mask&unix.STATX_DIOALIGN != 0,
			dioMem:    int(sx.Dio_mem_align),
			dioOffset: int(sx.Dio_offset_align),
		}, nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) {
		return statInfo{}, &os.PathError{Op: "statx", Path: name, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return statInfo{}, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	return statInfo{
		how:  "fstat",
		mode: st.Mode,
		size: st.Size,
		dev:  devNum{unix.Major(st.Dev), unix.Minor(st.Dev)},
		rdev: devNum{unix.Major(st.Rdev), unix.Minor(st.Rdev)},
	}, nil
}

// probeFd does Probe's work on a raw descriptor.
func probeFd(fd int, name string) (Geometry, error) {
	g := Geometry{Path: name, DirectSupported: true}
	st, err := statFd(fd, name)
	if err != nil {
		return Geometry{}, err
	}
	var q *queueInfo
	switch st.mode & unix.S_IFMT {
	case unix.S_IFBLK:
		if q, err = g.probeBlock(fd, st); err != nil {
			return Geometry{}, err
		}
	case unix.S_IFREG:
		q = g.probeRegular(st)
	default:
		// Character devices, pipes, sockets: O_DIRECT means something
		// else or nothing there (on a pipe it is packet mode).
		g.Size = st.size
		g.DirectSupported = false
		g.note("not a regular file or block device (mode %#o): no O_DIRECT", st.mode&unix.S_IFMT)
	}
	g.fillDirect(st, q)
	return g, nil
}

// probeBlock fills the figures of a block device and returns its queue,
// nil if sysfs has none for it. st_size is 0 for a block device, so the
// size comes from BLKGETSIZE64.
func (g *Geometry) probeBlock(fd int, st statInfo) (*queueInfo, error) {
	g.IsBlockDevice = true
	size, err := blkGetSize64(fd)
	if err != nil {
		return nil, &os.PathError{Op: "ioctl BLKGETSIZE64", Path: g.Path, Err: err}
	}
	g.Size = int64(size)
	g.note("block device %s, size %d (BLKGETSIZE64)", st.rdev, g.Size)
	q := probeQueue(st.rdev)
	if n, err := unix.IoctlGetInt(fd, unix.BLKSSZGET); err == nil && n > 0 {
		g.LogicalBlockSize = n
		g.note("logical block %d (BLKSSZGET)", n)
	} else {
		g.logicalFromQueue(q)
	}
	if n, err := unix.IoctlGetUint32(fd, unix.BLKPBSZGET); err == nil && n > 0 {
		g.PhysicalBlockSize = int(n)
		g.note("physical block %d (BLKPBSZGET)", n)
	} else {
		g.physicalFromQueue(q)
	}
	if q == nil {
		g.note("no sysfs queue for %s: optimal and max I/O unknown", st.rdev)
		return nil, nil
	}
	g.fillQueueHints(q)
	return q, nil
}

// probeRegular fills the figures of a regular file from st and from the
// block device the file system sits on (st_dev), if it has one.
func (g *Geometry) probeRegular(st statInfo) *queueInfo {
	g.Size = st.size
	g.note("regular file on device %s, size %d (%s)", st.dev, g.Size, st.how)
	q := probeQueue(st.dev)
	if q == nil {
		g.note("no block device behind %s (tmpfs, overlayfs, btrfs, NFS or FUSE?): block sizes unknown", st.dev)
		return nil
	}
	g.logicalFromQueue(q)
	g.physicalFromQueue(q)
	g.fillQueueHints(q)
	return q
}

func (g *Geometry) logicalFromQueue(q *queueInfo) {
	if q != nil && q.Logical > 0 {
		g.LogicalBlockSize = q.Logical
		g.note("logical block %d (sysfs %s queue/logical_block_size)", q.Logical, q.dev)
	}
}

func (g *Geometry) physicalFromQueue(q *queueInfo) {
	if q != nil && q.Physical > 0 {
		g.PhysicalBlockSize = q.Physical
		g.note("physical block %d (sysfs %s queue/physical_block_size)", q.Physical, q.dev)
	}
}
