package copier

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openTail opens a new file DST a second time, without O_DIRECT, for the
// unaligned last block (engine.FileDstTail), or returns nil to let the
// engine clear O_DIRECT on DST's own descriptor with fcntl, as before.
//
// fcntl is not enough on FUSE: clearing O_DIRECT changes the client's
// file description only; a server that opened its backing file with the
// client's O_DIRECT (go-fuse's loopback, virtiofsd with direct I/O
// allowed) hears nothing of it and fails the unaligned tail with EINVAL
// (issue 20: exit 1, DST cut). A fresh open is a new OPEN for the server,
// which opens its backing file without O_DIRECT.
//
// The open goes through /proc/self/fd/N of DST's descriptor, never
// through DST's name, which may name another file by now; it reaches an
// unnamed O_TMPFILE inode too; and the inode is checked after the open.
// Block devices need none: fcntl works for them (and an export's client
// writes partial blocks itself).
func (d *dest) openTail() *os.File {
	if !d.direct || d.end.isBlock {
		return nil
	}
	proc := fmt.Sprintf("/proc/self/fd/%d", d.f.Fd())
	f, err := openAs(proc, d.f.Name(), unix.O_WRONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil // no /proc: fcntl it is
	}
	var was, now unix.Stat_t
	if unix.Fstat(int(d.f.Fd()), &was) != nil || unix.Fstat(int(f.Fd()), &now) != nil ||
		was.Dev != now.Dev || was.Ino != now.Ino || setFlag(f, unix.O_NONBLOCK, false) != nil {
		f.Close()
		return nil
	}
	return f
}
