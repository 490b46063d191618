package qcow2

import "golang.org/x/sys/unix"

// Data maps a raw file's holes with SEEK_DATA and SEEK_HOLE, so that a
// hole in a raw backing file stays a hole in the image's map. lseek moves
// the descriptor's offset, which no reader here uses (they pread).
func (f rawFile) Data(off, end int64) (start, stop int64, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	cerr := rc.Control(func(fd uintptr) {
		start, err = unix.Seek(int(fd), off, unix.SEEK_DATA)
		if err == unix.ENXIO { // no data from off to the end of the file
			start, stop, err = end, end, nil
			return
		}
		if err != nil || start >= end {
			start, stop = min(start, end), min(start, end)
			return
		}
		stop, err = unix.Seek(int(fd), start, unix.SEEK_HOLE)
		stop = min(stop, end)
	})
	if cerr != nil {
		return 0, 0, cerr
	}
	return start, stop, err
}
