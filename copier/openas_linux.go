package copier

import (
	"github.com/ringcp/ringcp/internal/eintr"
	"os"

	"golang.org/x/sys/unix"
)

// openAs opens path and gives the *os.File the name name. The engine names
// files in its errors by File.Name, which must be DST's path, not its
// folder (an O_TMPFILE open) or /proc/self/fd/N (the tail of an unnamed
// DST).
func openAs(path, name string, flag int, perm uint32) (*os.File, error) {
	// EINTR: a signal before the open completed (FUSE, NFS).
	fd, err := eintr.Retry(func() (int, error) { return unix.Open(path, flag|unix.O_CLOEXEC, perm) })
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}
