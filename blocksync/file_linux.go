package blocksync

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/guard"
)

// File is an end of a sync on this host: a regular file or a block
// device, read with pread, written with pwrite, zeroed with fallocate.
// Its methods are safe for concurrent use on disjoint ranges.
type File struct {
	f     *os.File
	path  string
	st    unix.Stat_t
	size  atomic.Int64
	block bool
	fresh *fresh // a DST this sync creates, until Commit names it

	noPunch, noZeroRange atomicFlag // fallocate modes found unsupported (sticky)
}

type atomicFlag = atomic.Bool

// OpenSource opens SRC read-only (never for writing) and takes QEMU's
// shared read locks on it, as QEMU's readers do, so that no QEMU opens it
// for writing while the sync reads it. It refuses (*RefusedError) what is
// neither a regular file nor a block device, and a SRC that another
// program holds open for writing by QEMU's locks (its content is
// changing: KindLocked), and a symlink another user put in a shared
// sticky folder (planted_linux.go).
func OpenSource(path string) (*File, error) {
	if err := refusePlanted(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, openRefusal(path, "SRC", err)
	}
	e := &File{f: f, path: path}
	if err := e.measure(); err != nil {
		f.Close()
		return nil, err
	}
	c, err := guard.LockSrc(f)
	if err != nil && !guard.LockUnsupported(err) {
		f.Close()
		return nil, &OpError{Op: "lock", Path: path, Err: err}
	}
	if c != nil {
		who, _ := c.Holders(f, f)
		f.Close()
		return nil, refuse(KindLocked, path, fmt.Sprintf("SRC is open for writing (%s%s): its content is changing", c.What, heldBy(who)), nil)
	}
	return e, nil
}

// TargetOptions shape OpenTarget.
type TargetOptions struct {
	// Create makes a missing DST: a new regular file under a hidden
	// temporary name in DST's folder, named DST by Commit once it is
	// complete and synced (removed by Close otherwise).
	Create bool
	// Force lifts the KindInUse refusal (a DST held by another program
	// or driver), never KindMounted, and lets Create make a file in a
	// devtmpfs (/dev), where a missing DST is most likely a mistyped
	// device.
	Force bool
	// Src is the sync's SRC when it is on this host, so that a DST with
	// the same bytes (the same file, a loop device over it, a partition
	// of it) is refused.
	Src *File
}

// OpenTarget opens DST for reading and writing (never truncating it),
// after checking it, and takes DST's locks as a copy does (guard.LockDst,
// held until Close); a block device is opened with O_EXCL, so that
// nothing mounts or claims it while the sync writes. It refuses, with
// nothing written: what is neither a regular file nor a block device, a
// DST that is (or shares bytes with) something mounted or swap, one in
// use (unless Force), one another program holds locked, the same bytes
// as Src, a missing DST unless Create, and a symlink or an existing file
// another user put in a shared sticky folder (planted_linux.go).
func OpenTarget(path string, opt TargetOptions) (*File, error) {
	e := &File{path: path}
	if err := refusePlanted(path); err != nil {
		return nil, err
	}
	if err := refuseForeignDst(path); err != nil {
		return nil, err
	}
	if err := unix.Stat(path, &e.st); err != nil {
		if errors.Is(err, unix.ENOENT) && opt.Create {
			return createTarget(path, opt.Force)
		}
		return nil, openRefusal(path, "DST", err)
	}
	// Checked before the open: guard's probe opens a block device with
	// O_EXCL for a moment, which ours would make fail.
	if err := e.checkTarget(opt); err != nil {
		return nil, err
	}
	checked := guard.ObjectOf(&e.st)
	f, err := e.openTarget(opt)
	if err != nil {
		return nil, err
	}
	e.f = f
	err = e.measure()
	if err == nil && guard.ObjectOf(&e.st) != checked {
		err = refuse(KindChanged, path, "DST was replaced while it was checked", nil)
	}
	if err == nil {
		err = e.lockTarget()
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return e, nil
}

// openTarget opens DST: a block device with O_EXCL, which fails while
// anything holds it exclusively (a mount, LVM, md, a VM, another
// ringcp); Force opens a held one without, its mounts having been
// refused already.
func (e *File) openTarget(opt TargetOptions) (*os.File, error) {
	flag := os.O_RDWR | unix.O_CLOEXEC
	if e.st.Mode&unix.S_IFMT == unix.S_IFBLK {
		f, err := os.OpenFile(e.path, flag|os.O_EXCL, 0)
		switch {
		case err == nil:
			return f, nil
		case !errors.Is(err, unix.EBUSY):
			return nil, openRefusal(e.path, "DST", err)
		case !opt.Force:
			return nil, refuse(KindInUse, e.path, "the block device is held open exclusively (Force lifts this)", err)
		}
	}
	f, err := os.OpenFile(e.path, flag, 0)
	if err != nil {
		return nil, openRefusal(e.path, "DST", err)
	}
	return f, nil
}

// checkTarget refuses a DST that must not be written, from its stat.
func (e *File) checkTarget(opt TargetOptions) error {
	switch e.st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFBLK:
	case unix.S_IFDIR:
		return refuse(KindNotSupported, e.path, "DST is a folder; want a regular file or a block device", nil)
	default:
		return refuse(KindNotSupported, e.path, "neither a regular file nor a block device", nil)
	}
	span := guard.Span{Obj: guard.ObjectOf(&e.st), Off: 0, End: -1, Label: e.path}
	var srcSpan guard.Span
	if opt.Src != nil {
		srcSpan = guard.Span{Obj: guard.ObjectOf(&opt.Src.st), Off: 0, End: -1, Label: opt.Src.path}
		if o := guard.FindOverlap(srcSpan, span); o != nil {
			return refuse(KindOverlap, e.path, fmt.Sprintf("SRC and DST are the same bytes (%s; SRC: %s, DST: %s)", o.On, o.Src, o.Dst), nil)
		}
	}
	busy, err := guard.FindBusy(span, srcSpan)
	if err != nil {
		return &OpError{Op: "read the mount table", Path: e.path, Err: err}
	}
	for _, b := range busy {
		if b.Kind == guard.Mounted {
			return refuse(KindMounted, e.path, b.What+": writing it would corrupt what the kernel trusts there", nil)
		}
		if !opt.Force {
			return refuse(KindInUse, e.path, b.What+" (Force lifts this)", nil)
		}
	}
	return nil
}

// lockTarget takes DST's locks, refusing one someone else holds.
func (e *File) lockTarget() error {
	c, err := guard.LockDst(e.f)
	if err != nil && !guard.LockUnsupported(err) {
		return &OpError{Op: "lock", Path: e.path, Err: err}
	}
	if c != nil {
		who, _ := c.Holders(e.f, e.f)
		return refuse(KindLocked, e.path, fmt.Sprintf("DST is locked (%s%s)", c.What, heldBy(who)), nil)
	}
	return nil
}

func heldBy(who string) string {
	if who == "" {
		return ""
	}
	return ", held by " + who
}

// openRefusal turns a failed open of an end into a refusal.
func openRefusal(path, end string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return refuse(KindNotFound, path, end+" does not exist", err)
	case errors.Is(err, os.ErrPermission), errors.Is(err, unix.EROFS):
		return refuse(KindPermission, path, end+" may not be opened: "+err.Error(), err)
	case errors.Is(err, unix.EISDIR):
		return refuse(KindNotSupported, path, end+" is a folder; want a regular file or a block device", err)
	}
	return &OpError{Op: "open", Path: path, Err: err}
}

// measure learns what the end is and its size.
func (e *File) measure() error {
	if err := unix.Fstat(int(e.f.Fd()), &e.st); err != nil {
		return &OpError{Op: "fstat", Path: e.path, Err: err}
	}
	switch e.st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		e.size.Store(e.st.Size)
	case unix.S_IFBLK:
		e.block = true
		n, err := e.f.Seek(0, io.SeekEnd)
		if err != nil {
			return &OpError{Op: "measure", Path: e.path, Err: err}
		}
		e.size.Store(n)
	default:
		return refuse(KindNotSupported, e.path, "neither a regular file nor a block device", nil)
	}
	return nil
}

// Name is the path the end was opened by.
func (e *File) Name() string { return e.path }

// Size is the end's size when it was opened (or last truncated).
func (e *File) Size() int64 { return e.size.Load() }

// Descriptor is the open file the checks were made on, for a reader
// that must read this very file rather than whatever the name holds by
// then (copier.EachOptions.SrcFile). It stays e's to close.
func (e *File) Descriptor() *os.File { return e.f }

// Block says whether the end is a block device.
func (e *File) Block() bool { return e.block }

// Resizable: a regular file takes SRC's size; a block device keeps its.
func (e *File) Resizable() bool { return !e.block }

// Identity says which bytes the end is, for a peer on another host to
// tell whether it is its own other end.
func (e *File) Identity() Identity {
	o := guard.ObjectOf(&e.st)
	return Identity{Boot: bootID(), Block: o.Block, Rdev: o.Rdev, Dev: o.Dev, Ino: o.Ino}
}

// SharesBytes says where e and the peer's end (its Identity) share
// bytes when the peer is on this very machine (ssh to localhost): the
// same file or device, or one reached from the other through partitions
// and loop devices, as a local sync's overlap check finds them. "" when
// they share none or the peer is elsewhere.
func (e *File) SharesBytes(peer Identity) string {
	if peer.Boot == "" || peer.Boot != bootID() {
		return ""
	}
	obj := guard.Object{Block: peer.Block, Rdev: peer.Rdev, Dev: peer.Dev, Ino: peer.Ino}
	here := guard.Span{Obj: guard.ObjectOf(&e.st), End: -1, Label: e.path}
	there := guard.Span{Obj: obj, End: -1, Label: "the peer's end"}
	if o := guard.FindOverlap(here, there); o != nil {
		return fmt.Sprintf("%s; here: %s, the peer's: %s", o.On, o.Src, o.Dst)
	}
	return ""
}

// ReadAt reads at off; past the end it returns io.EOF, as os.File does.
func (e *File) ReadAt(p []byte, off int64) (int, error) {
	n, err := e.f.ReadAt(p, off)
	if err != nil && err != io.EOF {
		return n, &OpError{Op: "read", Path: e.path, Offset: off + int64(n), Err: unwrapPath(err)}
	}
	return n, err
}

// WriteAt writes p at off.
func (e *File) WriteAt(p []byte, off int64) (int, error) {
	n, err := e.f.WriteAt(p, off)
	if err != nil {
		return n, &OpError{Op: "write", Path: e.path, Offset: off + int64(n), Err: unwrapPath(err)}
	}
	return n, nil
}

// Truncate sets a regular file's size.
func (e *File) Truncate(size int64) error {
	if e.block {
		return &OpError{Op: "truncate", Path: e.path, Offset: size, Err: unix.EINVAL}
	}
	if err := e.f.Truncate(size); err != nil {
		return &OpError{Op: "truncate", Path: e.path, Offset: size, Err: unwrapPath(err)}
	}
	e.size.Store(size)
	return nil
}

// Sync makes what was written durable (fsync: a new file's size too).
func (e *File) Sync() error {
	if err := e.f.Sync(); err != nil {
		return &OpError{Op: "fsync", Path: e.path, Offset: 0, Err: unwrapPath(err)}
	}
	return nil
}

// Close releases the end (and its locks); a new DST that was not
// committed is removed.
func (e *File) Close() error {
	if e.fresh != nil && !e.fresh.named {
		// Removed while still locked: once unlocked, another sync may
		// take the name over.
		os.Remove(e.fresh.temp)
	}
	return e.f.Close()
}

// errnoName is the symbolic name admins search for, like EIO.
func errnoName(e syscall.Errno) string { return unix.ErrnoName(e) }

// unwrapPath gives the errno inside an *os.PathError, so that OpError
// names it once.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
