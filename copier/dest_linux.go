package copier

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// dest is DST opened for the copy.
type dest struct {
	f    *os.File
	tail *os.File // without O_DIRECT, for an unaligned last block; nil if f is buffered
	// unnamed: f is an O_TMPFILE inode that gets DST's name only when the
	// copy is complete and synced (publish). A new DST never exists half
	// copied, not even after a crash.
	unnamed bool
	linked  bool // a new DST, complete and named by publish
	created bool // a new DST created by name (no O_TMPFILE): ours to remove
}

// openDest opens DST: a new file as an unnamed inode in DST's folder (or
// by name where O_TMPFILE is missing), an existing file in place
// (truncated unless a range was given), a block device with O_EXCL.
func (p *Plan) openDest() (*dest, error) {
	flag := os.O_WRONLY | unix.O_CLOEXEC | directFlag(p.dst.direct)
	d := &dest{}
	var err error
	switch {
	case !p.dst.exists:
		d.f, err = openAs(filepath.Dir(p.dst.path), p.dst.path, flag|unix.O_TMPFILE, 0o644)
		d.unnamed = err == nil
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) {
			// No O_TMPFILE (older kernels, some FUSE and network
			// filesystems): create by name; someone else's file that
			// appeared meanwhile is not overwritten.
			d.f, err = os.OpenFile(p.dst.path, flag|os.O_CREATE|os.O_EXCL, 0o644)
			d.created = err == nil
		}
	case p.dst.isBlock:
		d.f, err = p.openBlockDest(flag)
	default:
		// Not O_TRUNC: the name may point at another file by now, which
		// check must see before anything is cut.
		d.f, err = os.OpenFile(p.dst.path, flag, 0)
	}
	if err != nil {
		return nil, err
	}
	if err := d.check(&p.dst); err != nil {
		d.f.Close()
		return nil, err
	}
	if p.truncate && p.dst.exists && !p.dst.isBlock {
		if err := d.f.Truncate(0); err != nil {
			d.f.Close()
			return nil, err
		}
	}
	if p.dst.direct {
		if err := d.openTail(p.dst.path); err != nil {
			d.f.Close()
			return nil, err
		}
	}
	return d, nil
}

// check guards against DST being swapped between Prepare and Run.
func (d *dest) check(ep *endpoint) error {
	if !ep.exists {
		return nil
	}
	return checkSame(d.f, ep)
}

// openTail opens DST a second time without O_DIRECT; through /proc for an
// unnamed inode.
func (d *dest) openTail(path string) error {
	open := path
	if d.unnamed {
		open = "/proc/self/fd/" + strconv.Itoa(int(d.f.Fd()))
	}
	var err error
	d.tail, err = openAs(open, path, os.O_WRONLY, 0)
	return err
}

// publish gives an unnamed DST its name once the copy is complete and, with
// sync, makes a new DST's name durable by syncing the folder.
func (d *dest) publish(path string, sync bool) error {
	if d.unnamed {
		if err := d.link(path); err != nil {
			return err
		}
	}
	d.linked = d.unnamed || d.created
	if !sync || !(d.unnamed || d.created) {
		return nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	err = dir.Sync()
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
		// This file system cannot sync a folder (FUSE servers without
		// FSYNCDIR, some network file systems): there is nothing more
		// to make durable from here.
		return nil
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir.Name(), err)
	}
	return nil
}

func (d *dest) link(path string) error {
	proc := "/proc/self/fd/" + strconv.Itoa(int(d.f.Fd()))
	if err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("%s: appeared while copying; the copy was not given its name and is discarded: %w", path, err)
		}
		return &os.LinkError{Op: "link", Old: proc, New: path, Err: err}
	}
	return nil
}
