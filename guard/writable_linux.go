package guard

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// fsAppendFL is FS_APPEND_FL (include/uapi/linux/fs.h), read with
// FS_IOC_GETFLAGS: writes only at the end, no truncation, root included.
// FS_IMMUTABLE_FL needs no check here: access(2) answers EPERM for it.
const fsAppendFL = 0x00000020

// Unwritable is why an existing regular file cannot be opened for
// writing.
type Unwritable int

// What CheckWritable finds.
const (
	Writable   Unwritable = iota // nothing found: the copy's own open will tell
	AppendOnly                   // chattr +a: it cannot be overwritten or truncated
	Running                      // ETXTBSY: it is a program that is running
	ReadOnly                     // EROFS: on a read-only filesystem
	Denied                       // EPERM, EACCES: a write an LSM or the mode denies
)

// CheckWritable says what keeps an existing regular file from being
// opened for writing, and the errno behind it (nil for AppendOnly and
// Writable): the cases access(2) misses. It opens the file O_WRONLY
// without O_TRUNC or O_CREAT, which changes nothing, and closes it at
// once. Not for a block device: closing one opened for writing makes udev
// rescan it.
func CheckWritable(path string) (Unwritable, error) {
	if flags, err := inodeFlags(path); err == nil && flags&fsAppendFL != 0 {
		return AppendOnly, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err == nil {
		f.Close()
		return Writable, nil
	}
	var errno unix.Errno
	errors.As(err, &errno)
	switch errno {
	case unix.ETXTBSY:
		return Running, errno
	case unix.EROFS:
		return ReadOnly, errno
	case unix.EPERM, unix.EACCES:
		return Denied, errno
	}
	return Writable, nil
}

// inodeFlags reads the chattr flags of path through a read-only
// descriptor. Filesystems without them answer ENOTTY or EOPNOTSUPP.
func inodeFlags(path string) (uint32, error) {
	f, err := os.OpenFile(path, lookFlags, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	// The kernel reads and writes an int here, whatever the ioctl number
	// says (long): IoctlGetUint32 passes a 4-byte buffer.
	return unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
}
