package copier

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// fsAppendFL is FS_APPEND_FL (include/uapi/linux/fs.h), read with
// FS_IOC_GETFLAGS: writes only at the end, no truncation, root included.
// FS_IMMUTABLE_FL needs no check here: access(2) in inspectDest already
// answers EPERM for it.
const fsAppendFL = 0x00000020

// checkWritable refuses an existing regular-file DST that the copy's open
// would fail on, so that it fails here, with nothing written: an
// append-only file (chattr +a), a running program (ETXTBSY), a read-only
// mount (EROFS), a write an LSM denies (EPERM). access(2) in inspectDest
// misses these. A block device gets no trial write-open: closing a
// block device opened for writing makes udev rescan it.
func (p *Plan) checkWritable() error {
	if !p.dst.exists || p.dst.isBlock {
		return nil
	}
	if flags, err := inodeFlags(p.dst.path); err == nil && flags&fsAppendFL != 0 {
		return refuse(p.dst.path, "DST is append-only (chattr +a): it cannot be overwritten or truncated (chattr -a lifts it)")
	}
	// O_WRONLY without O_TRUNC or O_CREAT changes nothing; closed at once.
	f, err := os.OpenFile(p.dst.path, os.O_WRONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err == nil {
		f.Close()
		return nil
	}
	var errno unix.Errno
	errors.As(err, &errno)
	switch errno {
	case unix.ETXTBSY:
		return refuseErr(p.dst.path, "DST is a program that is running", errno)
	case unix.EROFS:
		return refuseErr(p.dst.path, "DST is on a read-only filesystem", errno)
	case unix.EPERM, unix.EACCES:
		return refuseErr(p.dst.path, "DST may not be written", errno)
	}
	return nil // anything else: the open for the copy says it
}

// inodeFlags reads the chattr flags of path through a read-only
// descriptor. Filesystems without them answer ENOTTY or EOPNOTSUPP.
func inodeFlags(path string) (uint32, error) {
	f, err := os.OpenFile(path, inspectFlags, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	// The kernel reads and writes an int here, whatever the ioctl number
	// says (long): IoctlGetUint32 passes a 4-byte buffer.
	return unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
}
