package engine

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// The system calls the portable parts of the engine (planner, zeroing,
// barrier) make, named here so that the package also compiles where they
// do not exist (sys_other.go): importers that build for several systems
// must be able to import copier.

const (
	fallocKeepSize  = unix.FALLOC_FL_KEEP_SIZE
	fallocPunchHole = unix.FALLOC_FL_PUNCH_HOLE
	fallocZeroRange = unix.FALLOC_FL_ZERO_RANGE
)

func fallocate(fd int, mode uint32, off, n int64) error { return unix.Fallocate(fd, mode, off, n) }
func fdatasync(fd int) error                            { return unix.Fdatasync(fd) }
func ftruncate(fd int, size int64) error                { return unix.Ftruncate(fd, size) }
func seekData(fd int, off int64) (int64, error)         { return unix.Seek(fd, off, unix.SEEK_DATA) }
func seekHole(fd int, off int64) (int64, error)         { return unix.Seek(fd, off, unix.SEEK_HOLE) }
func sysErrnoName(e syscall.Errno) string               { return unix.ErrnoName(e) }

// clearDirect turns O_DIRECT off on fd's open file description (F_SETFL).
func clearDirect(fd int) error {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil || flags&unix.O_DIRECT == 0 {
		return err
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags&^unix.O_DIRECT)
	return err
}

// fileSize is fstat's size, and whether fd is a regular file.
func fileSize(fd int) (int64, bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, false, err
	}
	return st.Size, st.Mode&unix.S_IFMT == unix.S_IFREG, nil
}
