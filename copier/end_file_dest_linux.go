package copier

import (
	"errors"
	"fmt"
	"os"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/safedir"
	"golang.org/x/sys/unix"
)

// dest is a file or device DST opened for the copy: its target.
type dest struct {
	end *fileEnd
	f   *os.File
	// direct: f has O_DIRECT. Prepare decided it; a new DST created by
	// name on a filesystem that refuses O_DIRECT stays buffered.
	direct bool
	// creation says how a new DST was created (newUnnamed, newTemp), or
	// is newNone for an existing one.
	creation newMethod
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
	// tail is DST opened again without O_DIRECT for its unaligned last
	// block (engine.FileDstTail, end_file_tail_linux.go), or nil.
	tail *os.File
	// keepIt: a resumable copy's partial file, which a state file
	// records: a failure leaves it for the next run.
	keepIt bool
	locks  heldLocks // DST's locks, held until release
	h      held
}

var _ target = (*dest)(nil)

// openDst takes an existing DST's locks, then opens it as openDest does.
// What Run learns goes to rep: how a new DST is created, a side that
// stays buffered.
func (f *fileEnd) openDst(p *Plan, rep *Report) (target, error) {
	locks, err := f.lockDst(rep)
	if err != nil {
		return nil, err
	}
	d, err := f.openDest(p)
	if err != nil {
		locks.release()
		return nil, err
	}
	d.locks = locks
	if d.creation != newNone {
		rep.note("new DST is %s", d.creation)
	}
	if f.ep.direct && !d.direct {
		if p.opts.Direct == DirectAlways {
			d.discard()
			d.release()
			return nil, refuse(KindNotSupported, f.ep.path, "Options.Direct always: its filesystem refused O_DIRECT on the new file").on("Direct")
		}
		rep.DirectDst = false
		rep.note("DST %s: buffered: its filesystem refused O_DIRECT on the new file", f.ep.path)
	}
	d.h = held{f: d.f, align: 1}
	if d.direct {
		d.h.align = f.ep.alignment()
	}
	d.tail = d.openTail()
	return d, nil
}

func (d *dest) held() *held  { return &d.h }
func (d *dest) keep(on bool) { d.keepIt = on }
func (d *dest) kept() bool   { return d.keepIt }

// shape: a file this copy owns (new, or cut) gets exactly the range's end
// as its size and is cut back if the copy stops; a file that holds other
// data only grows, and keeps what lies outside the range. Its size is the
// one found at the open, not at Prepare: it may have changed in between.
// Its data ranges are preallocated ahead of the writes, and its unaligned
// tail written through a second descriptor (openTail). A block device
// keeps its size.
func (d *dest) shape(p *Plan, job *engine.Job) {
	if d.end.isBlock {
		return
	}
	end := p.opts.DstOffset + p.Length
	owned := p.truncate || !d.end.ep.exists
	job.CutBackOnStop = owned
	if owned || end > d.size {
		job.FinalSize = end
	}
	job.Preallocate = true
	if d.tail != nil {
		job.Files[engine.FileDstTail] = d.tail
	}
}

// release closes DST's descriptors and drops its locks.
func (d *dest) release() {
	if d.f != nil {
		d.f.Close()
	}
	d.close()
	d.locks.release()
}

// openDest opens DST without changing it: a new file as an unnamed inode
// or under a hidden temporary name (end_file_new_linux.go), an existing
// file in place, a block device with O_EXCL. It is cut, if at all, only
// once every other resource of the copy is acquired (Plan.Run).
func (f *fileEnd) openDest(p *Plan) (*dest, error) {
	ep := f.ep
	flag := p.dstAccess() | directFlag(ep.direct)
	d := &dest{end: f, direct: ep.direct}
	var err error
	switch {
	case !ep.exists:
		err = d.create(p, flag)
	case f.isBlock:
		d.f, err = f.openBlockDest(p, flag|unix.O_NONBLOCK)
	case p.resume != nil && p.resume.newDst:
		err = d.openPartial(p, flag|unix.O_NONBLOCK)
	default:
		// Not O_TRUNC: the name may point at another file by now, which
		// checkSame must see before anything is cut.
		d.f, err = openAs(ep.path, ep.path, flag|unix.O_NONBLOCK, 0)
	}
	if err != nil {
		d.close()
		return nil, err
	}
	if ep.exists {
		if err := f.checkOpened(d.f); err != nil {
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
func (f *fileEnd) openBlockDest(p *Plan, flag int) (*os.File, error) {
	path := f.ep.path
	file, err := os.OpenFile(path, flag|os.O_EXCL, 0)
	if !errors.Is(err, unix.EBUSY) {
		return file, err
	}
	if !p.opts.Force {
		return nil, refuseErr(KindInUse, path, "block device is in use (mounted or held open exclusively)", err).on("Dst")
	}
	busy, berr := f.dstBusy(p)
	if berr != nil {
		return nil, berr
	}
	for _, b := range busy {
		if b.Kind == guard.Mounted {
			return nil, refuseMounted(path, b.What)
		}
	}
	return os.OpenFile(path, flag, 0)
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
func (f *fileEnd) checkOpened(file *os.File) error {
	if err := f.checkSame(file); err != nil {
		return err
	}
	return setFlag(file, unix.O_NONBLOCK, false)
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
func (f *fileEnd) checkSame(file *os.File) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(file.Fd()), &st); err != nil {
		return err
	}
	if st.Dev != f.st.Dev || st.Ino != f.st.Ino || st.Mode&unix.S_IFMT != f.st.Mode&unix.S_IFMT {
		// Refused: nothing was written, the other file is left alone.
		return refuse(KindChanged, f.ep.path, "changed between checking and opening it (renamed or replaced meanwhile)")
	}
	return nil
}

// cut gives an existing file DST that the copy replaces from DstOffset on
// (SizeTruncate) that size, once nothing is left to acquire; a resumed
// copy that owns DST's size cuts it where it starts (Plan.cutAt). A sync
// gives DST SRC's size and cuts nothing: it reads DST over the whole
// range and writes what differs there, whoever wrote it (a resumed
// sync's partial file, cut where it resumes, ended before the range).
func (d *dest) cut(p *Plan) error {
	if p.changed.syncing {
		return p.sizeForSync(d)
	}
	if !p.truncate || !d.end.ep.exists {
		return nil
	}
	at := p.cutAt()
	if err := unix.Ftruncate(int(d.f.Fd()), at); err != nil {
		return fmt.Errorf("truncate %s to %d: %w", d.end.ep.path, at, err)
	}
	return nil
}

// publish gives a new DST its name once the copy is complete and, with
// sync, makes the name durable by syncing the folder.
func (d *dest) publish(p *Plan, sync bool) error {
	if d.creation == newNone {
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
	if d.tail != nil {
		d.tail.Close()
		d.tail = nil
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

// left says what a copy that stopped left in DST: a new DST that did not
// complete is discarded (DstDiscarded), one already named is complete; a
// file cut to its contiguous prefix is DstPrefix if its size says so; a
// barrier that failed leaves DstUnknown; anything else is DstPartial.
func (d *dest) left(p *Plan, rep *Report) DstState {
	switch {
	case d.published:
		return DstComplete // complete and named: only its folder's fsync failed
	case d.creation != newNone:
		if d.discard() {
			return DstDiscarded
		}
		return DstPartial
	case !rep.Synced && !p.opts.NoSync:
		return DstUnknown
	case p.truncate:
		// The engine cut the file to its contiguous prefix; trust that only
		// if the size says so (the cut itself can fail).
		var st unix.Stat_t
		if unix.Fstat(int(d.f.Fd()), &st) == nil && st.Size == p.opts.DstOffset+rep.Contiguous {
			return DstPrefix
		}
	}
	return DstPartial
}

// readBack makes DST's descriptor read from the device, not the page
// cache, and says how: O_DIRECT where the copy wrote with it, after an
// fdatasync and posix_fadvise(DONTNEED) of the range in either case
// (verify_linux.go says why).
func (d *dest) readBack(p *Plan) (string, error) {
	path, fd := d.end.ep.path, int(d.f.Fd())
	if err := unix.Fdatasync(fd); err != nil {
		return "", &os.PathError{Op: "fdatasync", Path: path, Err: err}
	}
	if err := unix.Fadvise(fd, p.opts.DstOffset, p.Length, unix.FADV_DONTNEED); err != nil {
		return "", &os.PathError{Op: "posix_fadvise(DONTNEED)", Path: path, Err: err}
	}
	if !d.direct {
		return "buffered, after fdatasync and posix_fadvise(DONTNEED) dropped the range from the page cache", nil
	}
	if err := setFlag(d.f, unix.O_DIRECT, true); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return "O_DIRECT", nil
}

// identity is DST's identity once opened: a new file's is its inode,
// known only now.
func (d *dest) identity(p *Plan) (identity, error) {
	id, err := identityOf(d.f, d.end.ep.path, 0, false)
	if err != nil {
		return identity{}, refuseErr(KindCheckFailed, d.end.ep.path, "cannot stat DST", err)
	}
	return id, nil
}
