package align

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// blkGetSize64 is ioctl(BLKGETSIZE64): the device's size in bytes. It is
// written out here because unix.IoctlGetUint64 only came with
// golang.org/x/sys v0.4x, which needs Go 1.26, and ringcp builds with
// x/sys v0.35 and Go 1.23 (go.mod).
func blkGetSize64(fd int) (uint64, error) {
	var size uint64
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.BLKGETSIZE64), uintptr(unsafe.Pointer(&size)))
	if errno != 0 {
		return 0, errno
	}
	return size, nil
}
