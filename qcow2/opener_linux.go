package qcow2

import (
	"fmt"
	"os"

	"github.com/ringcp/ringcp/guard"
	"golang.org/x/sys/unix"
)

// openLocal opens a file an image names, read-only, if it is a regular
// file or a block device off pseudo filesystems: it is looked at before
// it is opened (an open of a FIFO blocks, of a character device may act),
// opened without blocking and without becoming a controlling terminal,
// and looked at again through the descriptor, which must be the file
// looked at first.
func openLocal(name string) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Stat(name, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	if err := storesBytes(name, &st); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var fst unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &fst); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	if fst.Dev != st.Dev || fst.Ino != st.Ino {
		f.Close()
		return nil, fmt.Errorf("%s: replaced while it was opened", name)
	}
	return f, nil
}

// storesBytes refuses what is not a regular file or block device, and a
// file on a pseudo filesystem.
func storesBytes(name string, st *unix.Stat_t) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		return nil
	case unix.S_IFREG:
		if fs := guard.PseudoFS(name); fs != "" {
			return fmt.Errorf("%s is on %s, a pseudo filesystem: a kernel interface, not a disk", name, fs)
		}
		return nil
	}
	return fmt.Errorf("%s is not a regular file or block device (%s)", name, fileType(st.Mode))
}

func fileType(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	}
	return fmt.Sprintf("mode %#o", mode&unix.S_IFMT)
}
