package copier

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ringcp/ringcp/align"
	"golang.org/x/sys/unix"
)

// endpoint is one side of the copy as Prepare found it.
type endpoint struct {
	path    string
	exists  bool
	st      unix.Stat_t
	isBlock bool
	geo     align.Geometry
	direct  bool   // O_DIRECT will be used
	why     string // why direct is on or off
	// fresh is how a new DST will be created; freshWhy why not unnamed.
	fresh    newMethod
	freshWhy string
	// export is set when the end is an NBD export (export_linux.go).
	export *exportEnd
}

// fsPath is a path on the filesystem the end is on: the end itself, or a
// new file's folder.
func (ep *endpoint) fsPath() string {
	if ep.exists {
		return ep.path
	}
	return filepath.Dir(ep.path)
}

// fsDev is the device of the filesystem the end is on; false when a new
// file's folder cannot be looked at.
func (ep *endpoint) fsDev() (uint64, bool) {
	if ep.exists {
		return ep.st.Dev, true
	}
	var st unix.Stat_t
	if unix.Stat(filepath.Dir(ep.path), &st) != nil {
		return 0, false
	}
	return st.Dev, true
}

// inspectSource stats and measures SRC through a read-only descriptor: the
// source is never opened for writing.
func inspectSource(path string) (endpoint, error) {
	ep := endpoint{path: path, exists: true}
	if err := refuseKind(path); err != nil {
		return ep, err.on("Src")
	}
	f, err := os.OpenFile(path, inspectFlags, 0)
	if err != nil {
		return ep, refuseOpen(path, err).on("Src")
	}
	defer f.Close()
	if err := ep.stat(f); err != nil {
		return ep, err.on("Src")
	}
	if ep.geo, err = align.Probe(f); err != nil {
		return ep, refuseErr(KindCheckFailed, path, "cannot measure", err).on("Src")
	}
	return ep, nil
}

// inspectDest looks at DST without changing it: an existing one is opened
// read-only to measure it and checked for write permission with access(2);
// for a new one the folder is checked and measured through an O_TMPFILE
// inode, which vanishes on close.
func inspectDest(path string) (endpoint, error) {
	ep := endpoint{path: path}
	if err := refuseKind(path); err != nil {
		return ep, err.on("Dst")
	}
	if err := refuseForeignDst(path); err != nil {
		return ep, err.on("Dst")
	}
	f, err := os.OpenFile(path, inspectFlags, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := ep.inspectNew(); err != nil {
			return ep, err.on("Dst")
		}
		return ep, nil
	case errors.Is(err, os.ErrPermission):
		return ep, refuseErr(KindPermission, path, "cannot open DST", err).on("Dst")
	case err != nil:
		return ep, refuseOpen(path, err).on("Dst")
	}
	defer f.Close()
	ep.exists = true
	if err := ep.stat(f); err != nil {
		return ep, err.on("Dst")
	}
	if err := unix.Access(path, unix.W_OK); err != nil {
		return ep, refuseErr(KindPermission, path, "DST is not writable", err).on("Dst")
	}
	if ep.geo, err = align.Probe(f); err != nil {
		return ep, refuseErr(KindCheckFailed, path, "cannot measure", err).on("Dst")
	}
	return ep, nil
}

func (ep *endpoint) inspectNew() *RefusedError {
	if err := refuseDangling(ep.path); err != nil {
		return err
	}
	dir := filepath.Dir(ep.path)
	fi, err := os.Stat(dir)
	if err != nil {
		kind := KindCheckFailed
		if errors.Is(err, os.ErrNotExist) {
			kind = KindNotFound
		}
		return refuseErr(kind, ep.path, "DST's folder is missing", err)
	}
	if !fi.IsDir() {
		return refuse(KindNotFound, ep.path, fmt.Sprintf("%s is not a folder", dir))
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return refuseErr(KindPermission, ep.path, "cannot create DST", err)
	}
	tmp, err := os.OpenFile(dir, unix.O_TMPFILE|os.O_WRONLY|unix.O_CLOEXEC, 0o600)
	ep.chooseNewMethod(tmp, err)
	if err != nil {
		// No O_TMPFILE here (some FUSE and network filesystems): assume
		// the common 4096 alignment, and let the direct test open decide.
		ep.geo = align.Geometry{Path: ep.path, MemAlign: 4096, OffsetAlign: 4096, DirectSupported: true,
			Notes: []string{fmt.Sprintf("alignment 4096 assumed (O_TMPFILE in %s: %v)", dir, err)}}
		return nil
	}
	defer tmp.Close()
	ep.geo, err = align.Probe(tmp)
	if err != nil {
		return refuseErr(KindCheckFailed, ep.path, "cannot measure DST's filesystem", err)
	}
	ep.geo.Path, ep.geo.Size = ep.path, 0
	return nil
}

// refuseDangling refuses a DST that is a symlink to nothing, as cp does:
// creating the file it points to would write wherever the link says, and
// the link was checked by nobody.
func refuseDangling(path string) *RefusedError {
	target, err := os.Readlink(path)
	if err != nil {
		return nil // not a symlink
	}
	return &RefusedError{Kind: KindNotFound, Path: path, Err: syscall.ENOENT,
		Reason: fmt.Sprintf("is a symlink to %s, which does not exist: ringcp does not create files through a dangling symlink", target)}
}

// stat accepts regular files and block devices only. Character devices,
// FIFOs and sockets are refused: they have no size to check a range
// against, no offsets, and no O_DIRECT; and a stream that ends early looks
// like one that is complete, so success could not be proven. Stream them
// with dd or cat.
func (ep *endpoint) stat(f *os.File) *RefusedError {
	if err := unix.Fstat(int(f.Fd()), &ep.st); err != nil {
		return refuseErr(KindCheckFailed, ep.path, "cannot stat", err)
	}
	ep.isBlock = ep.st.Mode&unix.S_IFMT == unix.S_IFBLK
	return kindError(ep.path, ep.st.Mode)
}

// inspectFlags open an endpoint to look at it. O_NONBLOCK: should the path
// turn into a FIFO after refuseKind looked, the open must not wait for a
// writer; on files and disks it changes nothing.
const inspectFlags = os.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK

// refuseKind refuses what stat(2) already shows is not a regular file or a
// block device, before opening it: opening a FIFO blocks until someone
// writes to it, and opening some character devices acts (a tape rewinds
// on close, a serial line hangs up). A symlink another user planted in a
// shared sticky folder is refused first (refusePlanted).
func refuseKind(path string) *RefusedError {
	if err := refusePlanted(path); err != nil {
		return err
	}
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return nil // the open that follows says what is wrong
	}
	return kindError(path, st.Mode)
}

func kindError(path string, mode uint32) *RefusedError {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFBLK:
	case unix.S_IFDIR:
		return &RefusedError{Kind: KindNotSupported, Path: path, Reason: "is a directory", Err: syscall.EISDIR}
	case unix.S_IFCHR:
		return refuse(KindNotSupported, path, "is a character device: ringcp copies regular files and block devices")
	case unix.S_IFIFO:
		return refuse(KindNotSupported, path, "is a FIFO: ringcp copies regular files and block devices (stream it with dd)")
	default:
		return refuse(KindNotSupported, path, "is not a regular file or block device")
	}
	return nil
}

// refuseOpen says why an endpoint could not be opened, once: the
// errno's own words, wrapped so that errors.Is(err, syscall.ENOENT) works.
func refuseOpen(path string, err error) *RefusedError {
	errno := unwrapErrno(err)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &RefusedError{Kind: KindNotFound, Path: path, Reason: "no such file or device", Err: errno}
	case errors.Is(err, os.ErrPermission):
		return &RefusedError{Kind: KindPermission, Path: path, Reason: "permission denied", Err: errno}
	}
	return refuseErr(KindCheckFailed, path, "cannot open", err)
}

// unwrapErrno is the errno inside err, or err itself.
func unwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// sameObject says SRC and DST are one file or one block device (two device
// nodes of one device count as one), or may be one NBD export.
func sameObject(a, b *endpoint) bool {
	same, _ := sameObjectWhy(a, b)
	return same
}

// sameObjectWhy is sameObject, with what a and b are for people.
func sameObjectWhy(a, b *endpoint) (bool, string) {
	if a.export != nil || b.export != nil {
		if a.export == nil || b.export == nil {
			return false, ""
		}
		return a.export.sameWhy(b.export)
	}
	what := "the same " + a.kind()
	if !a.exists || !b.exists {
		return false, ""
	}
	if a.st.Dev == b.st.Dev && a.st.Ino == b.st.Ino {
		return true, what
	}
	return a.isBlock && b.isBlock && a.st.Rdev == b.st.Rdev, what
}

// tryDirect opens the endpoint with O_DIRECT to learn whether the
// filesystem takes it (tmpfs before 6.6 and some FUSE mounts answer EINVAL).
func (ep *endpoint) tryDirect() error {
	var f *os.File
	var err error
	if ep.exists {
		// inspectFlags' O_NONBLOCK: the path may be a FIFO by now.
		f, err = os.OpenFile(ep.path, inspectFlags|unix.O_DIRECT, 0)
		if err == nil {
			defer f.Close()
			return checkSame(f, ep)
		}
	} else {
		f, err = os.OpenFile(filepath.Dir(ep.path), unix.O_TMPFILE|os.O_WRONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
		if err != nil && ep.fresh == newTemp {
			return nil // no O_TMPFILE to test with: DST is switched to O_DIRECT after its creation, where that works
		}
	}
	if err != nil {
		return err
	}
	return f.Close()
}
