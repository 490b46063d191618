package untar

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// dirFlags open a directory on a member's way: O_PATH (no read right
// needed, only search), O_NOFOLLOW with O_DIRECTORY (a symbolic link
// there is ENOTDIR or ELOOP, never followed).
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// parent opens the directory a member (a cleaned name) goes in, one
// element at a time from the root, making what is missing; the caller
// closes it.
func (x *extractor) parent(name string) (fd int, base string, err error) {
	dirs, base := split(name)
	fd, err = unix.Dup(x.root)
	if err != nil {
		return -1, "", err
	}
	for i, elem := range dirs {
		next, err := openDir(fd, elem)
		if errors.Is(err, unix.ENOENT) {
			// GNU tar makes a member's missing directories too.
			if err = unix.Mkdirat(fd, elem, 0o700); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openDir(fd, elem)
			}
		}
		unix.Close(fd)
		if err != nil {
			way := strings.Join(dirs[:i+1], "/")
			return -1, "", &MemberError{Name: name, Reason: fmt.Sprintf("its directory %q cannot be entered without following a link (%v)", way, err)}
		}
		fd = next
	}
	return fd, base, nil
}

func openDir(at int, elem string) (int, error) {
	for {
		fd, err := unix.Openat(at, elem, dirFlags, 0)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// makeRoom removes what stands at base (in parent) unless it is a
// directory: a member is never written through a file, or a link, that
// was there (planted by an earlier member or an earlier tenant). isDir
// tells there is a directory.
func makeRoom(parent int, base string) (isDir bool, err error) {
	var st unix.Stat_t
	switch err := unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case errors.Is(err, unix.ENOENT):
		return false, nil
	case err != nil:
		return false, err
	case st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return true, nil
	}
	return false, unix.Unlinkat(parent, base, 0)
}

// file writes a regular member's data into a new file.
func (x *extractor) file(parent int, base string, h *tar.Header, tr *tar.Reader) error {
	if isDir, err := makeRoom(parent, base); err != nil || isDir {
		return wrap(h, "replace", firstErr(err, unix.EISDIR))
	}
	fd, err := unix.Openat(parent, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return wrap(h, "create", err)
	}
	f := os.NewFile(uintptr(fd), base)
	defer f.Close()
	n, err := io.Copy(onlyWriter{f}, tr)
	x.st.Bytes += n
	if err != nil {
		return fmt.Errorf("tar member %q after %d of its %d bytes: %w", h.Name, n, h.Size, err)
	}
	if err := f.Chmod(os.FileMode(mode(h))); err != nil {
		return wrap(h, "chmod", err)
	}
	if err := unix.Futimes(fd, times(h)); err != nil {
		return wrap(h, "set its time", err)
	}
	x.st.Files++
	return f.Close()
}

// onlyWriter hides the file's ReadFrom: the archive's reader is copied
// through a buffer, and its data counted as written.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

func times(h *tar.Header) []unix.Timeval {
	tv := unix.NsecToTimeval(h.ModTime.UnixNano())
	return []unix.Timeval{tv, tv}
}

func firstErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// mkdir makes a directory member (or keeps the one there), writable by
// the extraction until finishDirs gives it the archive's mode.
func (x *extractor) mkdir(parent int, base string, h *tar.Header) error {
	isDir, err := makeRoom(parent, base)
	if err != nil {
		return wrap(h, "replace", err)
	}
	if isDir {
		err = unix.Fchmodat(parent, base, 0o700, 0)
	} else {
		err = unix.Mkdirat(parent, base, 0o700)
	}
	if err != nil {
		return wrap(h, "mkdir", err)
	}
	name, _ := cleanName(h.Name)
	x.dirs = append(x.dirs, dirMeta{name: name, mode: mode(h), mtime: h.ModTime})
	x.st.Dirs++
	return nil
}

// symlink makes a symbolic link member whose target stays beneath the
// root.
func (x *extractor) symlink(parent int, base, name string, h *tar.Header) error {
	if err := checkSymlink(name, h.Linkname); err != nil {
		return err
	}
	if isDir, err := makeRoom(parent, base); err != nil || isDir {
		return wrap(h, "replace", firstErr(err, unix.EISDIR))
	}
	if err := unix.Symlinkat(h.Linkname, parent, base); err != nil {
		return wrap(h, "symlink", err)
	}
	x.st.Symlinks++
	return nil
}

// hardlink links a member to another beneath the root, found the way a
// member's name is (no link followed on the way, nor the target itself).
func (x *extractor) hardlink(parent int, base string, h *tar.Header) error {
	target, err := cleanName(h.Linkname)
	if err != nil || target == "" {
		return &MemberError{Name: h.Name, Reason: fmt.Sprintf("a hard link to %q, outside the volume", h.Linkname)}
	}
	tparent, tbase, err := x.parent(target)
	if err != nil {
		return &MemberError{Name: h.Name, Reason: fmt.Sprintf("a hard link to %q: %v", h.Linkname, err)}
	}
	defer unix.Close(tparent)
	if isDir, err := makeRoom(parent, base); err != nil || isDir {
		return wrap(h, "replace", firstErr(err, unix.EISDIR))
	}
	if err := unix.Linkat(tparent, tbase, parent, base, 0); err != nil {
		return wrap(h, "link to "+h.Linkname, err)
	}
	x.st.Links++
	return nil
}

// fifo makes a named pipe member.
func (x *extractor) fifo(parent int, base string, h *tar.Header) error {
	if isDir, err := makeRoom(parent, base); err != nil || isDir {
		return wrap(h, "replace", firstErr(err, unix.EISDIR))
	}
	if err := unix.Mknodat(parent, base, unix.S_IFIFO|0o600, 0); err != nil {
		return wrap(h, "mkfifo", err)
	}
	if err := unix.Fchmodat(parent, base, mode(h), 0); err != nil {
		return wrap(h, "chmod", err)
	}
	x.st.Fifos++
	return nil
}

// finishDirs gives the directories the archive named their mode and
// time, the deepest first: a directory without search right for its
// owner no longer lets the extraction reach below it.
func (x *extractor) finishDirs() error {
	sort.SliceStable(x.dirs, func(i, j int) bool {
		return strings.Count(x.dirs[i].name, "/") > strings.Count(x.dirs[j].name, "/")
	})
	for _, d := range x.dirs {
		parent, base, err := x.parent(d.name)
		if err != nil {
			return err
		}
		err = x.finishDir(parent, base, d)
		unix.Close(parent)
		if err != nil {
			return err
		}
	}
	return nil
}

func (x *extractor) finishDir(parent int, base string, d dirMeta) error {
	fd, err := unix.Openat(parent, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &MemberError{Name: d.name, Reason: fmt.Sprintf("open to set its mode: %v", err)}
	}
	defer unix.Close(fd)
	if err := unix.Fchmod(fd, d.mode); err != nil {
		return &MemberError{Name: d.name, Reason: fmt.Sprintf("chmod: %v", err)}
	}
	tv := unix.NsecToTimeval(d.mtime.UnixNano())
	if err := unix.Futimes(fd, []unix.Timeval{tv, tv}); err != nil {
		return &MemberError{Name: d.name, Reason: fmt.Sprintf("set its time: %v", err)}
	}
	return nil
}
