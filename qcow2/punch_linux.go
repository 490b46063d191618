package qcow2

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// punch makes host bytes [off, off+n) of t a hole that reads as zeros,
// keeping the file's size: FALLOC_FL_PUNCH_HOLE (ext4, xfs, btrfs,
// tmpfs). It says false where t has no descriptor or the filesystem
// cannot: the clusters are then not handed out again (a piece written
// into one would leave its old bytes around it).
func punch(t WriteTransport, off, n int64) bool {
	f, ok := t.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var perr error
	if err := rc.Control(func(fd uintptr) {
		perr = unix.Fallocate(int(fd), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
	}); err != nil {
		return false
	}
	return perr == nil
}
