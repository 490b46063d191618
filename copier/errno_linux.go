package copier

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// errnoName is the symbolic name admins search for: EIO, ENOSPC.
func errnoName(e syscall.Errno) string { return unix.ErrnoName(e) }
