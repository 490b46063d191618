package copier

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/blkcg"
	"golang.org/x/sys/unix"
)

// The kind of a path: a regular file or a block device on this host,
// reached through its descriptor (engine.FileEnd). It is what an operand
// is that no other kind claims. The checks of package guard apply to it
// (end_file_checks_linux.go, end_file_inuse_linux.go), and its locks
// (end_file_locks_linux.go); a new DST is created unseen and named when
// complete (end_file_new_linux.go), an opened one lives as a dest
// (end_file_dest_linux.go).

func init() { registerKind(endKind{name: "file", inspect: inspectFile}, pathOperand) }

// fileEnd is a local file or block device.
type fileEnd struct {
	ep *endpoint
	// label names the end in what guard finds: the operand, which for a
	// resumed copy's new DST is not the partial file ep.path names.
	label   string
	st      unix.Stat_t
	isBlock bool
	// creation is how a new DST will be created; creationWhy why not
	// unnamed.
	creation    newMethod
	creationWhy string
}

// newFileEnd is an endpoint of the file kind for path, yet to be
// inspected.
func newFileEnd(path string, r role) (*endpoint, *fileEnd) {
	ep := &endpoint{path: path, role: r}
	f := &fileEnd{ep: ep, label: path}
	ep.end = f
	return ep, f
}

// inspectFile looks at a path: SRC (and both ends of Compare) read-only,
// DST as inspectTarget does (for a resumed copy, its partial file).
func inspectFile(p *Plan, path string, r role) (*endpoint, error) {
	if r == roleSrc && !p.readOnly {
		// A FIFO, a compressed file (end_stream_linux.go).
		if ep, err, ok := inspectLocalSrc(p, path); ok {
			return ep, err
		}
	}
	if r == roleSrc || p.readOnly {
		return inspectSource(path, r)
	}
	return inspectTarget(p)
}

// settle fills in the facts of an end once it is stat'ed and measured.
func (f *fileEnd) settle() {
	ep := f.ep
	ep.what, ep.fixedSize, ep.canDirect, ep.offloads = "file", f.isBlock, true, !f.isBlock
	if f.isBlock {
		ep.what = "block device"
		// fallocate on a block device wants logical-block alignment.
		ep.holeAlign = max(ep.geo.LogicalBlockSize, 512)
	}
	// A file is asked for its holes; a device has none to tell.
	ep.mapsHoles, ep.readBackMaps = !f.isBlock, !f.isBlock
	ep.zeroUnitWhat = "DST's alignment"
	ep.disk, ep.onDisk = f.diskUnder()
}

// fsPath is a path on the filesystem the end is on: the end itself, or a
// new file's folder.
func (f *fileEnd) fsPath() string {
	if f.ep.exists {
		return f.ep.path
	}
	return filepath.Dir(f.ep.path)
}

// fsDev is the device of the filesystem the end is on; false when a new
// file's folder cannot be looked at.
func (f *fileEnd) fsDev() (uint64, bool) {
	if f.ep.exists {
		return f.st.Dev, true
	}
	var st unix.Stat_t
	if unix.Stat(filepath.Dir(f.ep.path), &st) != nil {
		return 0, false
	}
	return st.Dev, true
}

// diskUnder is the whole disk whose I/O the cgroups count for the end:
// the device itself, or the disk of the file system holding the file (for
// a new DST, its folder). A file system on no disk (tmpfs, NFS, FUSE;
// btrfs's anonymous device) has none.
func (f *fileEnd) diskUnder() (uint64, bool) {
	if f.isBlock {
		return blkcg.DiskOf(f.st.Rdev)
	}
	dev, ok := f.fsDev()
	if !ok {
		return 0, false
	}
	return blkcg.DiskOf(dev)
}

// inspectSource stats and measures an end to be read through a read-only
// descriptor: the source is never opened for writing.
func inspectSource(path string, r role) (*endpoint, error) {
	ep, f := newFileEnd(path, r)
	ep.exists = true
	if err := refuseKind(path); err != nil {
		return ep, err.on(r.field())
	}
	file, err := os.OpenFile(path, inspectFlags, 0)
	if err != nil {
		return ep, refuseOpen(path, err).on(r.field())
	}
	defer file.Close()
	if err := f.stat(file); err != nil {
		return ep, err.on(r.field())
	}
	if ep.geo, err = align.Probe(file); err != nil {
		return ep, refuseErr(KindCheckFailed, path, "cannot measure", err).on(r.field())
	}
	f.settle()
	return ep, nil
}

// inspectDest looks at DST without changing it: an existing one is opened
// read-only to measure it and checked for write permission with access(2);
// for a new one the folder is checked and measured through an O_TMPFILE
// inode, which vanishes on close.
func inspectDest(path string) (*endpoint, error) {
	ep, f := newFileEnd(path, roleDst)
	if err := refuseKind(path); err != nil {
		return ep, err.on("Dst")
	}
	if err := refuseForeignDst(path); err != nil {
		return ep, err.on("Dst")
	}
	file, err := os.OpenFile(path, inspectFlags, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := f.inspectNew(); err != nil {
			return ep, err.on("Dst")
		}
		f.settle()
		return ep, nil
	case errors.Is(err, os.ErrPermission):
		return ep, refuseErr(KindPermission, path, "cannot open DST", err).on("Dst")
	case err != nil:
		return ep, refuseOpen(path, err).on("Dst")
	}
	defer file.Close()
	ep.exists = true
	if err := f.stat(file); err != nil {
		return ep, err.on("Dst")
	}
	if err := unix.Access(path, unix.W_OK); err != nil {
		return ep, refuseErr(KindPermission, path, "DST is not writable", err).on("Dst")
	}
	if ep.geo, err = align.Probe(file); err != nil {
		return ep, refuseErr(KindCheckFailed, path, "cannot measure", err).on("Dst")
	}
	f.settle()
	return ep, nil
}

func (f *fileEnd) inspectNew() *RefusedError {
	ep := f.ep
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
	f.chooseNewMethod(tmp, err)
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
func (f *fileEnd) stat(file *os.File) *RefusedError {
	if err := unix.Fstat(int(file.Fd()), &f.st); err != nil {
		return refuseErr(KindCheckFailed, f.ep.path, "cannot stat", err)
	}
	f.isBlock = f.st.Mode&unix.S_IFMT == unix.S_IFBLK
	return kindError(f.ep.path, f.st.Mode)
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

// same says the end and o are one file or one block device (two device
// nodes for one disk have different inodes but the same rdev), or two new
// DSTs that would be one file (end_file_newname_linux.go).
func (f *fileEnd) same(o *endpoint) (bool, string) {
	o = baseOf(o) // the file beneath an image
	g, ok := o.end.(*fileEnd)
	what := "the same " + f.ep.what
	switch {
	case !ok:
		return false, ""
	case !f.ep.exists && !o.exists:
		return newFileOf(f.ep.path).same(newFileOf(o.path)), "the same new file"
	case !f.ep.exists || !o.exists:
		return false, ""
	}
	return guard.ObjectOf(&f.st) == guard.ObjectOf(&g.st), what
}

// object is the file or device the end is, for another kind that may
// reach it another way (an NBD server that serves it); none for a new
// DST.
func (f *fileEnd) object() (guard.Object, bool) {
	return guard.ObjectOf(&f.st), f.ep.exists
}

// overlap finds bytes the end and o, another existing file or device,
// share through partitions and loop devices: a disk and its own
// partition, a loop device and the file or device behind it.
func (f *fileEnd) overlap(mine byteRange, o *endpoint, theirs byteRange) *overlap {
	if l, ok := o.end.(layered); ok {
		// An image's guest offsets are not its file's: any of the file.
		o, theirs = l.base(), byteRange{0, -1}
	}
	g, ok := o.end.(*fileEnd)
	if !ok || !f.ep.exists || !o.exists {
		return nil
	}
	if ov := guard.FindOverlap(g.span(theirs), f.span(mine)); ov != nil {
		return &overlap{on: ov.On, mine: ov.Dst, theirs: ov.Src}
	}
	return nil
}

// span is r of the end, for guard.
func (f *fileEnd) span(r byteRange) guard.Span {
	return guard.Span{Obj: guard.ObjectOf(&f.st), Off: r.off, End: r.end, Label: f.label}
}

// identity is the end's identity as it is now, read through a descriptor
// checked to be the object Prepare inspected; a new DST has none yet (its
// inode's is taken once it is created: dest.identity).
func (f *fileEnd) identity() (identity, error) {
	ep := f.ep
	if !ep.exists {
		return identity{}, nil
	}
	file, err := os.OpenFile(ep.path, inspectFlags, 0)
	if err != nil {
		return identity{}, refuseOpen(ep.path, err)
	}
	defer file.Close()
	if err := f.checkSame(file); err != nil {
		return identity{}, err
	}
	id, err := identityOf(file, ep.path, ep.geo.Size, ep.role == roleSrc)
	if err != nil {
		return identity{}, refuseErr(KindCheckFailed, ep.path, "cannot tell what it is", err)
	}
	return id, nil
}

// close: a file holds nothing open between Prepare and Run.
func (f *fileEnd) close() error { return nil }
