package copier

import (
	"fmt"
	"strings"

	"github.com/ringcp/ringcp/guard"
)

// checkInUse refuses an existing DST that something else relies on,
// before anything is written, on what guard finds:
//
//   - SRC and DST overlap through partitions or loop devices (never
//     overridden: the copy would overwrite what it has yet to read);
//   - DST, the disk it is a partition of, a partition of it, or a loop
//     device stacked on it is mounted or active swap (never overridden:
//     the kernel trusts what it wrote there);
//   - DST is in use: held by device-mapper or md (sysfs holders), open
//     exclusively by another program (O_EXCL fails with EBUSY), or the
//     backing of a loop device. Options.Force writes anyway.
func (f *fileEnd) checkInUse(p *Plan) error {
	if !f.ep.exists {
		return nil
	}
	if err := f.checkOverlap(p); err != nil {
		return err
	}
	busy, err := f.dstBusy(p)
	if err != nil {
		return err
	}
	var inUse []string
	for _, b := range busy {
		if b.Kind == guard.Mounted {
			return refuseMounted(p.opts.Dst, b.What)
		}
		inUse = append(inUse, b.What)
	}
	if len(inUse) == 0 {
		return nil
	}
	why := strings.Join(inUse, "; ")
	if !p.opts.Force {
		return refuse(KindInUse, p.opts.Dst, "in use: "+why+" (Options.Force writes anyway)").on("Dst")
	}
	p.forced(why)
	return nil
}

// refuseMounted is the refusal Options.Force cannot lift.
func refuseMounted(path, what string) error {
	return refuse(KindMounted, path, "in use: "+what+"; ringcp never writes over a mounted file system or swap, not even with Options.Force").on("Dst")
}

// dstBusy lists why DST must not, or should not, be written.
func (f *fileEnd) dstBusy(p *Plan) ([]guard.Busy, error) {
	var src guard.Span // what the copy reads through, when SRC is a file too
	if s, ok := p.src.end.(*fileEnd); ok {
		src = s.span(p.srcRange())
	}
	busy, err := guard.FindBusy(f.span(p.dstRange()), src)
	if err != nil {
		return nil, refuseErr(KindCheckFailed, p.opts.Dst, "cannot tell whether DST is mounted", err).on("Dst")
	}
	return busy, nil
}

// checkOverlap refuses SRC and DST that reach the same bytes through
// partitions or loop devices: a disk and its own partition, a loop device
// and the file or device behind it. Writing would destroy what is still
// to be read. checkSameObject has already caught the plain cases.
func (f *fileEnd) checkOverlap(p *Plan) error {
	if ov := f.overlap(p.dstRange(), p.src, p.srcRange()); ov != nil {
		return refuse(KindOverlap, p.opts.Dst, fmt.Sprintf("SRC and DST overlap on %s: SRC %s, DST %s", ov.on, ov.theirs, ov.mine)).on("Dst")
	}
	if ov := f.overlap(byteRange{0, -1}, p.src, byteRange{0, -1}); ov != nil {
		if p.ownWrites == "" {
			p.ownWrites = fmt.Sprintf("SRC and DST share %s, in other bytes", ov.on)
		}
		p.ownThrough = append(p.ownThrough, throughOf(f.ep)...)
	}
	return nil
}

// throughOf lists the block devices whose counts of sectors written
// the writes to ep move (guard.Through): none for a file, or an end that
// is no local file or device.
func throughOf(ep *endpoint) []uint64 {
	ep = baseOf(ep)
	if f, ok := ep.end.(*fileEnd); ok && ep.exists {
		return guard.Through(f.span(byteRange{0, -1}))
	}
	return nil
}

// checkSrcWriters refuses a SRC whose bytes a file system mounted
// read-write (or swap) changes while they are read: the copy of a live
// file system is inconsistent, its metadata from one moment and its data
// from another, and fsck may not mend it. Mounted read-only it is a
// stable image. Options.Force copies it anyway (a crash-consistent copy
// someone wants, a file system known to be idle).
func (f *fileEnd) checkSrcWriters(p *Plan) error {
	if p.Length == 0 {
		return nil
	}
	writers, err := guard.FindWriters(f.span(p.srcRange()))
	if err != nil {
		// Reading SRC harms nothing: where the mount table cannot be read
		// (no /proc in a chroot or a minimal container) the copy goes on,
		// and says that this was not checked.
		p.note("%s: cannot tell whether SRC is mounted read-write (%v): not checked", p.opts.Src, err)
		return nil
	}
	if len(writers) == 0 {
		return nil
	}
	why := strings.Join(writers, "; ")
	if !p.opts.Force {
		return refuse(KindInUse, p.opts.Src, "SRC is written while it is read, mounted read-write: "+why+": a live file system copies inconsistently; unmount it or remount it read-only (mount -o remount,ro), copy a snapshot, or Options.Force copies it anyway").on("Src")
	}
	p.addForced("SRC is mounted read-write: " + why)
	p.note("Options.Force: reading %s although it is mounted read-write: %s", p.opts.Src, why)
	return nil
}
