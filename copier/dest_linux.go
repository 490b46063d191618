package copier

import (
	"errors"
	"fmt"
	"os"

	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/safedir"
	"golang.org/x/sys/unix"
)

// dest is DST opened for the copy.
type dest struct {
	f *os.File
	// direct: f has O_DIRECT. Prepare decided it; a new DST created by
	// name on a filesystem that refuses O_DIRECT stays buffered.
	direct bool
	// fresh says how a new DST was created (newUnnamed, newTemp), or
	// is newNone for an existing one.
	fresh newMethod
	// tmp is the hidden name of a newTemp DST until publish renames it.
	tmp string
	// published: a new DST, complete, has DST's name.
	published bool
	// size is an existing file DST's size when it was opened.
	size int64
	// dir is a new DST's folder, opened with everything else before the
	// copy: its temporary name is made, renamed and removed through it,
	// and it is fsync'ed to make DST's name durable (at the end there may
	// be no descriptor left to open it with).
	dir *safedir.Dir
	// keep: a resumable copy's partial file, which a state file records:
	// a failure leaves it for the next run.
	keep bool
}

// openDest opens DST without changing it: a new file as an unnamed inode
// or under a hidden temporary name (newfile_linux.go), an existing file in
// place, a block device with O_EXCL. It is cut, if at all, only once every
// other resource of the copy is acquired (Plan.Run).
func (p *Plan) openDest() (*dest, error) {
	if !p.dst.local() {
		return &dest{}, nil // an export: its client is opened with SRC's (openExports)
	}
	flag := p.dstAccess() | directFlag(p.dst.direct)
	d := &dest{direct: p.dst.direct}
	var err error
	switch {
	case !p.dst.exists:
		err = d.create(p, flag)
	case p.dst.isBlock:
		d.f, err = p.openBlockDest(flag | unix.O_NONBLOCK)
	case p.resume != nil && p.resume.newDst:
		err = d.openPartial(p, flag|unix.O_NONBLOCK)
	default:
		// Not O_TRUNC: the name may point at another file by now, which
		// checkSame must see before anything is cut.
		d.f, err = openAs(p.dst.path, p.dst.path, flag|unix.O_NONBLOCK, 0)
	}
	if err != nil {
		d.close()
		return nil, err
	}
	if p.dst.exists {
		if err := checkOpened(d.f, &p.dst); err != nil {
			d.f.Close()
			return nil, err
		}
		fi, err := d.f.Stat()
		if err != nil {
			d.f.Close()
			return nil, err
		}
		d.size = fi.Size()
	}
	return d, nil
}

// openBlockDest opens a block device DST with O_EXCL: while ringcp writes,
// nothing can mount it or claim it. O_EXCL fails with EBUSY if it is
// mounted or held by another exclusive opener (LVM, md, a VM, another
// ringcp). With Force a held device is opened without O_EXCL, after
// checking again that it is not mounted: that is never overridden.
func (p *Plan) openBlockDest(flag int) (*os.File, error) {
	f, err := os.OpenFile(p.dst.path, flag|os.O_EXCL, 0)
	if !errors.Is(err, unix.EBUSY) {
		return f, err
	}
	if !p.opts.Force {
		return nil, refuseErr(KindInUse, p.dst.path, "block device is in use (mounted or held open exclusively)", err).on("Dst")
	}
	busy, berr := p.dstBusy()
	if berr != nil {
		return nil, berr
	}
	for _, b := range busy {
		if b.Kind == guard.Mounted {
			return nil, refuseMounted(p.dst.path, b.What)
		}
	}
	return os.OpenFile(p.dst.path, flag, 0)
}

// checkOpened makes sure a descriptor opened by name is the object Prepare
// inspected, then clears the O_NONBLOCK it was opened with.
//
// O_NONBLOCK on the open: a path swapped for a FIFO after Prepare would
// otherwise block the open until a peer appears, and no signal ends that
// wait. With it, the open of a FIFO returns at once (ENXIO for a writer
// without a reader), and the identity check refuses whatever was opened.
// Cleared afterwards: io_uring treats an O_NONBLOCK regular file as
// "never block", so reads that miss the page cache would come back
// -EAGAIN instead of waiting.
func checkOpened(f *os.File, ep *endpoint) error {
	if err := checkSame(f, ep); err != nil {
		return err
	}
	return setFlag(f, unix.O_NONBLOCK, false)
}

// setFlag turns one F_SETFL flag (O_NONBLOCK, O_DIRECT) on or off on f's
// open file description.
func setFlag(f *os.File, flag int, on bool) error {
	fd := f.Fd()
	flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
	if err != nil {
		return os.NewSyscallError("fcntl(F_GETFL)", err)
	}
	want := flags &^ flag
	if on {
		want = flags | flag
	}
	if want == flags {
		return nil
	}
	if _, err := unix.FcntlInt(fd, unix.F_SETFL, want); err != nil {
		return os.NewSyscallError("fcntl(F_SETFL)", err)
	}
	return nil
}

// checkSame guards against the path being swapped between Prepare and Run.
func checkSame(f *os.File, ep *endpoint) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Dev != ep.st.Dev || st.Ino != ep.st.Ino || st.Mode&unix.S_IFMT != ep.st.Mode&unix.S_IFMT {
		// Refused: nothing was written, the other file is left alone.
		return refuse(KindChanged, ep.path, "changed between checking and opening it (renamed or replaced meanwhile)")
	}
	return nil
}

// cut gives an existing file DST that the copy replaces from DstOffset on
// (SizeTruncate) that size, once nothing is left to acquire; a resumed
// copy that owns DST's size cuts it where it starts (Plan.cutAt).
func (d *dest) cut(p *Plan) error {
	if !p.truncate || !p.dst.exists {
		return nil
	}
	at := p.cutAt()
	if err := unix.Ftruncate(int(d.f.Fd()), at); err != nil {
		return fmt.Errorf("truncate %s to %d: %w", p.dst.path, at, err)
	}
	return nil
}

// publish gives a new DST its name once the copy is complete and, with
// sync, makes the name durable by syncing the folder.
func (d *dest) publish(p *Plan, sync bool) error {
	if d.fresh == newNone {
		return nil
	}
	// DST's own name: p.dst.path is a resumed copy's partial file.
	if err := d.name(p.opts.Dst); err != nil {
		return err
	}
	d.published = true
	if !sync {
		return nil
	}
	return syncDir(d.dir.File())
}

// close closes the descriptors of DST that are not the copy's files.
func (d *dest) close() {
	if d.dir != nil {
		d.dir.Close()
	}
}

// syncDir fsyncs a new DST's folder, so a name just given survives a
// crash.
func syncDir(dir *os.File) error {
	err := dir.Sync()
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

func directFlag(on bool) int {
	if on {
		return unix.O_DIRECT
	}
	return 0
}
