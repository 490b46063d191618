package copier

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// What a resume state (state_linux.go) records of SRC and DST, so that a
// rerun knows they are the very objects the earlier run copied between.
//
// An identity names the object: a file by device and inode, and by the
// inode's generation (FS_IOC_GETVERSION) and birth time (statx) where the
// filesystem keeps them, because an inode number freed and given to a
// new file (XFS does so at once) is another file with the same number; a
// block device by what sysfs says of it: a loop device by its backing
// file (device, inode, offset, size limit), another disk by its WWID or
// serial, else by its number, and a partition by its start; an end known
// by name (an NBD export) by its name and size. Any difference refuses
// the rerun.
//
// Marks are what every write to an object changes: a file's size, mtime
// and ctime; for a loop device its backing file's, which every write
// through the loop device reaches. touch -d can set mtime back, never
// ctime. SRC's marks are compared as they are: ringcp never writes SRC.
// DST's tell a rerun whether anything wrote DST since the state was
// recorded (resumecheck_linux.go).

// fsIocGetVersion is FS_IOC_GETVERSION, _IOR('v', 1, long), which
// x/sys does not name: FS_IOC_GETFLAGS, _IOR('f', 1, long), with its
// type byte changed, so that long's size stays the architecture's. The
// kernel writes an int (ext4, xfs and btrfs alike).
const fsIocGetVersion = unix.FS_IOC_GETFLAGS&^0xff00 | 'v'<<8

// marksAt reads the marks of the file dirfd and path name (statx's
// convention: path "" with AT_EMPTY_PATH is dirfd itself) from where they
// are kept: AT_STATX_FORCE_SYNC makes a network filesystem ask its
// server rather than answer from its attribute cache, which may be a
// minute old (NFS's actimeo) and miss another client's write.
func marksAt(dirfd int, path string, flags int) (*marks, *unix.Statx_t) {
	var sx unix.Statx_t
	const want = unix.STATX_TYPE | unix.STATX_INO | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME
	if unix.Statx(dirfd, path, flags|unix.AT_STATX_FORCE_SYNC, want, &sx) != nil || sx.Mask&want != want {
		return nil, nil
	}
	ns := func(t unix.StatxTimestamp) int64 { return t.Sec*1e9 + int64(t.Nsec) }
	return &marks{Size: int64(sx.Size), Mtime: ns(sx.Mtime), Ctime: ns(sx.Ctime)}, &sx
}

// identityOf describes the local end f, opened at path: a file or a block
// device of size bytes. withMarks adds its marks (SRC; and every file a
// copy reads, which must not change while it is read:
// srcchanged_linux.go), a loop device's after an fsync.
func identityOf(f fder, path string, size int64, withMarks bool) (identity, error) {
	return identityFlushed(f, path, size, withMarks, withMarks)
}

// identityFlushed is identityOf, fsync'ing a loop device whose marks it
// reads only with flush.
func identityFlushed(f fder, path string, size int64, withMarks, flush bool) (identity, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return identity{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		id := blockIdentity(path, &st)
		id.Size = size
		if withMarks && id.Loop != nil {
			// A write into the loop device's page cache reaches its
			// backing file, and changes its marks, only when written
			// back: now, or another opener keeps it dirty for as long as
			// writeback waits. fsync needs no write access.
			if err := fsyncIf(flush, f, path); err != nil {
				return identity{}, err
			}
			id.Marks = id.Loop.marks()
		}
		return id, nil
	}
	id := identity{Path: path, Kind: kindFile, Dev: st.Dev, Ino: st.Ino}
	if gen, err := unix.IoctlGetUint32(int(f.Fd()), fsIocGetVersion); err == nil {
		id.Gen = &gen
	}
	var sx unix.Statx_t
	if unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH, unix.STATX_BTIME, &sx) == nil && sx.Mask&unix.STATX_BTIME != 0 {
		id.Btime = sx.Btime.Sec*1e9 + int64(sx.Btime.Nsec)
	}
	if withMarks {
		id.Marks, _ = marksAt(int(f.Fd()), "", unix.AT_EMPTY_PATH)
	}
	return id, nil
}

// fsyncIf fsyncs f, opened at path, when flush says so.
func fsyncIf(flush bool, f fder, path string) error {
	if !flush {
		return nil
	}
	if err := unix.Fsync(int(f.Fd())); err != nil {
		return &os.PathError{Op: "fsync", Path: path, Err: err}
	}
	return nil
}

// blockIdentity is what sysfs and the loop driver say of a block device.
func blockIdentity(path string, st *unix.Stat_t) identity {
	id := identity{Path: path, Kind: kindBlock, Rdev: st.Rdev}
	dev, err := sysblock.Lookup(st.Rdev)
	if err != nil {
		return id
	}
	disk := dev
	if dev.IsPartition() {
		id.Start, _ = dev.PartitionStart()
		if disk, err = dev.Disk(); err != nil {
			return id
		}
	}
	id.DiskSeq = readSys(disk.Dir, "diskseq")
	if l, ok := sysblock.LoopOf(disk); ok {
		id.Loop = &loopBacking{File: strings.TrimSuffix(l.File, " (deleted)"), Dev: l.Backing.Dev, Ino: l.Backing.Ino,
			Rdev: l.Backing.Rdev, Offset: l.Offset, SizeLimit: l.Size}
		return id
	}
	for _, name := range []string{"wwid", "device/wwid", "serial", "device/serial"} {
		if v := readSys(disk.Dir, name); v != "" {
			id.Disk = name + " " + v
			break
		}
	}
	return id
}

func readSys(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// marks are the backing file's, read through its path, when that path
// still names the backing (a loop device over a block device, or over a
// file since renamed or removed, has none to give).
func (l *loopBacking) marks() *marks {
	if l == nil || l.Rdev != 0 {
		return nil
	}
	m, sx := marksAt(unix.AT_FDCWD, l.File, 0)
	if m == nil || sx.Mode&unix.S_IFMT != unix.S_IFREG || unix.Mkdev(sx.Dev_major, sx.Dev_minor) != l.Dev || sx.Ino != l.Ino {
		return nil
	}
	return m
}

// dstMarks are DST's marks now, read through its descriptor f: a file's,
// a loop device's backing file's, or nil where nothing records writes (a
// disk, an export).
func dstMarks(f *os.File, id identity) *marks {
	if f == nil {
		return nil
	}
	if id.Kind == kindBlock {
		return id.Loop.marks()
	}
	m, _ := marksAt(int(f.Fd()), "", unix.AT_EMPTY_PATH)
	return m
}

// differs says what changed from the recorded identity rec to now, or "".
func (rec identity) differs(now identity) string {
	if rec.Kind != now.Kind {
		return fmt.Sprintf("it was a %s, it is a %s now", rec.Kind, now.Kind)
	}
	var why string
	switch rec.Kind {
	case kindBlock:
		why = rec.blockDiffers(now)
	case kindFile:
		why = rec.fileDiffers(now)
	default:
		why = rec.nameDiffers(now)
	}
	if why != "" || rec.Marks == nil {
		return why
	}
	if now.Marks == nil {
		return "what tells whether it changed (its size, mtime and ctime; a loop device's backing file's) cannot be read now"
	}
	return rec.Marks.differs(*now.Marks)
}

// nameDiffers compares an end known by its name and size alone, as an
// NBD export is: nothing else a client sees of it stays the same.
func (rec identity) nameDiffers(now identity) string {
	switch {
	case rec.Path != now.Path:
		return fmt.Sprintf("it was the %s %s, this copy's is %s", rec.Kind, rec.Path, now.Path)
	case rec.Size != now.Size:
		return fmt.Sprintf("its size was %d bytes, it is %d now", rec.Size, now.Size)
	case rec.ETag != now.ETag:
		return fmt.Sprintf("its ETag was %s, it is %s now", rec.ETag, now.ETag)
	}
	return ""
}

func (rec identity) fileDiffers(now identity) string {
	switch {
	case rec.Dev != now.Dev || rec.Ino != now.Ino:
		return fmt.Sprintf("it is another file now (inode %d on device %#x, was %d on %#x)", now.Ino, now.Dev, rec.Ino, rec.Dev)
	case rec.Gen != nil && now.Gen != nil && *rec.Gen != *now.Gen:
		return fmt.Sprintf("it is another file now: its inode number was freed and given to a new file (inode generation %d, was %d)", *now.Gen, *rec.Gen)
	case rec.Btime != 0 && now.Btime != 0 && rec.Btime != now.Btime:
		return fmt.Sprintf("it is another file now: its inode number was freed and given to a new file (born %s, was %s)", stamp(now.Btime), stamp(rec.Btime))
	}
	return ""
}

func (rec identity) blockDiffers(now identity) string {
	switch {
	case rec.Loop != nil || now.Loop != nil:
		if why := rec.Loop.differs(now.Loop); why != "" {
			return why
		}
	case rec.Disk != "" && now.Disk != "":
		if rec.Disk != now.Disk {
			return fmt.Sprintf("it is another disk now (%s, was %s)", now.Disk, rec.Disk)
		}
	case rec.Rdev != now.Rdev:
		return fmt.Sprintf("it was device %d:%d, it is %d:%d now", unix.Major(rec.Rdev), unix.Minor(rec.Rdev), unix.Major(now.Rdev), unix.Minor(now.Rdev))
	}
	switch {
	case rec.Start != now.Start:
		return fmt.Sprintf("it starts at byte %d of its disk now, was %d", now.Start, rec.Start)
	case rec.Size != now.Size:
		return fmt.Sprintf("its size was %d bytes, it is %d now", rec.Size, now.Size)
	}
	return ""
}

// differs compares two loop backings; a loop device may have another
// number now (attached again after a reboot): what it shows is its
// backing's.
func (rec *loopBacking) differs(now *loopBacking) string {
	switch {
	case rec == nil:
		return fmt.Sprintf("it is a loop device over %s now, it was not one", now.File)
	case now == nil:
		return fmt.Sprintf("it is no loop device now; it was one over %s", rec.File)
	case rec.Dev != now.Dev || rec.Ino != now.Ino || rec.Rdev != now.Rdev:
		return fmt.Sprintf("its backing file is %s now (inode %d on device %#x), it was %s (inode %d on %#x)", now.File, now.Ino, now.Dev, rec.File, rec.Ino, rec.Dev)
	case rec.Offset != now.Offset || rec.SizeLimit != now.SizeLimit:
		return fmt.Sprintf("it shows bytes %d+%d of its backing file now, it showed %d+%d (0: to the end)", now.Offset, now.SizeLimit, rec.Offset, rec.SizeLimit)
	}
	return ""
}

// differs says how a file's marks changed, or "".
func (rec marks) differs(now marks) string {
	switch {
	case rec.Size != now.Size:
		return fmt.Sprintf("its size was %d bytes, it is %d now", rec.Size, now.Size)
	case rec.Mtime != now.Mtime:
		return fmt.Sprintf("it was modified (mtime %s, was %s)", stamp(now.Mtime), stamp(rec.Mtime))
	case rec.Ctime != now.Ctime:
		// touch -d sets mtime back and moves ctime; so does, with no
		// write, a rename, link or unlink of any of its names, a chmod,
		// chown or xattr (ext4, xfs, btrfs, tmpfs on Linux 6.18):
		// nothing tells them apart.
		return fmt.Sprintf("its inode changed (ctime %s, was %s): written with its mtime set back, or renamed, linked or unlinked, or its mode, owner or attributes changed", stamp(now.Ctime), stamp(rec.Ctime))
	}
	return ""
}
