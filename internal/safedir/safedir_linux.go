package safedir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ringcp/ringcp/internal/eintr"
	"golang.org/x/sys/unix"
)

// Dir is a folder opened once, and the path it was opened by (for
// messages: every operation goes through the descriptor).
type Dir struct {
	f    *os.File
	Path string
}

// Open opens the folder at path. Symlinks on the way are followed: path
// is the folder the caller named; from here on it is this folder.
func Open(path string) (*Dir, error) {
	return open(path, 0)
}

func open(path string, extra int) (*Dir, error) {
	fd, err := eintr.Retry(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|extra, 0)
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), Path: path}, nil
}

// File is the folder's descriptor, for an fsync or fstatfs.
func (d *Dir) File() *os.File { return d.f }

// Close closes the folder.
func (d *Dir) Close() error { return d.f.Close() }

// Join is the path of name in the folder, for messages.
func (d *Dir) Join(name string) string { return filepath.Join(d.Path, name) }

func (d *Dir) fd() int { return int(d.f.Fd()) }

// Create makes name, which must not exist: a symlink, a hard link or any
// file already there fails it with EEXIST. flag adds the access mode and
// O_DIRECT or the like; the file is named path for the caller's messages.
func (d *Dir) Create(name, path string, flag int, perm uint32) (*os.File, error) {
	return d.openat(name, path, flag|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, perm)
}

// OpenFile opens name as it is, never through a symlink (ELOOP).
func (d *Dir) OpenFile(name, path string, flag int) (*os.File, error) {
	return d.openat(name, path, flag|unix.O_NOFOLLOW, 0)
}

// OpenUnnamed opens an unnamed O_TMPFILE inode in the folder.
func (d *Dir) OpenUnnamed(path string, flag int, perm uint32) (*os.File, error) {
	return d.openat(".", path, flag|unix.O_TMPFILE, perm)
}

func (d *Dir) openat(name, path string, flag int, perm uint32) (*os.File, error) {
	// EINTR: a signal before the open completed (FUSE, NFS).
	fd, err := eintr.Retry(func() (int, error) {
		return unix.Openat(d.fd(), name, flag|unix.O_CLOEXEC, perm)
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// Lstat describes name itself, a symlink as a symlink.
func (d *Dir) Lstat(name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return st, &os.PathError{Op: "lstat", Path: d.Join(name), Err: err}
	}
	return st, nil
}

// Names names the folder's entries.
func (d *Dir) Names() ([]string, error) {
	// A descriptor of its own: reading entries moves the offset of d's.
	g, err := d.openat(".", d.Path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	return g.Readdirnames(-1)
}

// Remove unlinks name (a symlink itself, never what it points at).
func (d *Dir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd(), name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: d.Join(name), Err: err}
	}
	return nil
}

// Rename renames old over name.
func (d *Dir) Rename(old, name string) error {
	if err := unix.Renameat(d.fd(), old, d.fd(), name); err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(old), New: d.Join(name), Err: err}
	}
	return nil
}

// RenameNoReplace renames old to name unless name exists (EEXIST):
// renameat2 RENAME_NOREPLACE; where the filesystem lacks it (EINVAL: NFS,
// some FUSE servers), a hard link, which fails on an existing name too,
// then the unlink of old, whose failure is left to the caller's next run
// (the file is complete and named by then).
func (d *Dir) RenameNoReplace(old, name string) error {
	err := unix.Renameat2(d.fd(), old, d.fd(), name, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		if err = unix.Linkat(d.fd(), old, d.fd(), name, 0); err == nil {
			unix.Unlinkat(d.fd(), old, 0)
		}
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(old), New: d.Join(name), Err: err}
	}
	return nil
}

// Link gives the unnamed inode f (O_TMPFILE) the name name: by descriptor
// where CAP_DAC_READ_SEARCH allows (no /proc needed), else through
// /proc/self/fd. It fails with EEXIST where name exists.
func (d *Dir) Link(f *os.File, name string) error {
	err := unix.Linkat(int(f.Fd()), "", d.fd(), name, unix.AT_EMPTY_PATH)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EPERM) {
		proc := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
		err = unix.Linkat(unix.AT_FDCWD, proc, d.fd(), name, unix.AT_SYMLINK_FOLLOW)
	}
	if err != nil {
		return &os.PathError{Op: "link", Path: d.Join(name), Err: err}
	}
	return nil
}

// Named says name is the very file f now (same device and inode), not a
// symlink or another file put there.
func (d *Dir) Named(f *os.File, name string) bool {
	var mine unix.Stat_t
	now, err := d.Lstat(name)
	if err != nil || unix.Fstat(int(f.Fd()), &mine) != nil {
		return false
	}
	return mine.Dev == now.Dev && mine.Ino == now.Ino
}

// Sync fsyncs the folder, so that names given or removed in it survive a
// crash.
func (d *Dir) Sync() error { return d.f.Sync() }

// ReadOwn reads name, which OpenOwn must accept. A missing file is an
// error matching fs.ErrNotExist.
func (d *Dir) ReadOwn(name string) ([]byte, error) {
	f, err := d.OpenOwn(name, d.Join(name), unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// OpenOwn opens name (never through a symlink, and without blocking on a
// FIFO put there), which must be a regular file owned by this process's
// user and writable by nobody else: what another user planted there is
// not trusted (an *OwnerError). The check is made on the opened
// descriptor, so nothing can be swapped in after it.
func (d *Dir) OpenOwn(name, path string, flag int) (*os.File, error) {
	f, err := d.OpenFile(name, path, flag|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "fstat", Path: d.Join(name), Err: err}
	}
	if err := checkOwn(d.Join(name), &st, unix.S_IFREG); err != nil {
		f.Close()
		return nil, err
	}
	if flag&unix.O_NONBLOCK == 0 {
		if err := setNonblock(f, false); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// LstatOwn says whether the file at path (not what a symlink there points
// at) is one OpenOwn would accept; nil when it is.
func LstatOwn(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return checkOwn(path, &st, unix.S_IFREG)
}

// setNonblock clears (or sets) O_NONBLOCK on f's open file description:
// io_uring treats an O_NONBLOCK regular file as "never block".
func setNonblock(f *os.File, on bool) error {
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err == nil {
		if on {
			flags |= unix.O_NONBLOCK
		} else {
			flags &^= unix.O_NONBLOCK
		}
		_, err = unix.FcntlInt(f.Fd(), unix.F_SETFL, flags)
	}
	if err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	return nil
}

// Replace writes data as name, whole or not at all: into tmp, made with
// Create (a leftover tmp is removed first: the caller's own, from a run
// that was killed, never followed; another user's is in the way and
// fails the write, untouched), with sync
// fsync'ed, then renamed over name. Syncing the folder, to make the new
// name durable, is the caller's: some filesystems cannot (FUSE).
func (d *Dir) Replace(name, tmp string, data []byte, perm uint32, sync bool) error {
	if st, err := d.Lstat(tmp); err == nil && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is in the way: another user's (uid %d)", d.Join(tmp), st.Uid)
	}
	if err := d.Remove(tmp); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	f, err := d.Create(tmp, d.Join(tmp), unix.O_WRONLY, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.Rename(tmp, name)
	}
	if err != nil {
		d.Remove(tmp)
	}
	return err
}
