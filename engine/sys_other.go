//go:build !linux

package engine

import (
	"errors"
	"syscall"
)

// Elsewhere than Linux the engine has no backend to run with (io_uring and
// the pool are Linux code), so none of these is ever reached; they exist
// so that the package, and copier above it, compile for every system.

const (
	fallocKeepSize  = 0x01 // Linux's values, never passed to a system call here
	fallocPunchHole = 0x02
	fallocZeroRange = 0x10
)

var errNotLinux = errors.ErrUnsupported

func fallocate(fd int, mode uint32, off, n int64) error { return errNotLinux }
func fdatasync(fd int) error                            { return errNotLinux }
func ftruncate(fd int, size int64) error                { return errNotLinux }
func seekData(fd int, off int64) (int64, error)         { return 0, errNotLinux }
func seekHole(fd int, off int64) (int64, error)         { return 0, errNotLinux }
func sysErrnoName(e syscall.Errno) string               { return "" }
func fileSize(fd int) (int64, bool, error)              { return 0, false, errNotLinux }
func clearDirect(fd int) error                          { return errNotLinux }
