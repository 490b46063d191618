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
func (p *Plan) checkInUse() error {
	if !p.dst.exists || !p.dst.local() {
		return nil
	}
	if err := p.checkOverlap(); err != nil {
		return err
	}
	busy, err := p.dstBusy()
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
	p.Forced = why
	p.note("Options.Force: writing %s although %s", p.opts.Dst, why)
	return nil
}

// refuseMounted is the refusal Options.Force cannot lift.
func refuseMounted(path, what string) error {
	return refuse(KindMounted, path, "in use: "+what+"; ringcp never writes over a mounted file system or swap, not even with Options.Force").on("Dst")
}

// dstBusy lists why DST must not, or should not, be written.
func (p *Plan) dstBusy() ([]guard.Busy, error) {
	busy, err := guard.FindBusy(p.dstSpan(), p.srcSpan())
	if err != nil {
		return nil, refuseErr(KindCheckFailed, p.opts.Dst, "cannot tell whether DST is mounted", err).on("Dst")
	}
	return busy, nil
}

// srcSpan is what the copy reads; dstSpan what it may change: with
// truncation, all of DST from DstOffset on (cut there, then sized).
func (p *Plan) srcSpan() guard.Span {
	o := p.opts
	return guard.Span{Obj: guard.ObjectOf(&p.src.st), Off: o.SrcOffset, End: o.SrcOffset + p.Length, Label: o.Src}
}

func (p *Plan) dstSpan() guard.Span {
	o := p.opts
	s := guard.Span{Obj: guard.ObjectOf(&p.dst.st), Off: o.DstOffset, End: o.DstOffset + p.Length, Label: o.Dst}
	if p.truncate {
		s.End = -1
	}
	return s
}

// checkOverlap refuses SRC and DST that reach the same bytes through
// partitions or loop devices: a disk and its own partition, a loop device
// and the file or device behind it. Writing would destroy what is still
// to be read. checkSameObject has already caught the plain cases.
func (p *Plan) checkOverlap() error {
	if !p.dst.exists || !p.src.local() {
		return nil
	}
	if ov := guard.FindOverlap(p.srcSpan(), p.dstSpan()); ov != nil {
		return refuse(KindOverlap, p.opts.Dst, fmt.Sprintf("SRC and DST overlap on %s: SRC %s, DST %s", ov.On, ov.Src, ov.Dst)).on("Dst")
	}
	return nil
}

// checkSrcWriters refuses a SRC whose bytes a file system mounted
// read-write (or swap) changes while they are read: the copy of a live
// file system is inconsistent, its metadata from one moment and its data
// from another, and fsck may not mend it. Mounted read-only it is a
// stable image. Options.Force copies it anyway (a crash-consistent copy
// someone wants, a file system known to be idle).
func (p *Plan) checkSrcWriters() error {
	if !p.src.local() || p.Length == 0 {
		return nil
	}
	writers, err := guard.FindWriters(p.srcSpan())
	if err != nil {
		return refuseErr(KindCheckFailed, p.opts.Src, "cannot tell whether SRC is mounted", err).on("Src")
	}
	if len(writers) == 0 {
		return nil
	}
	why := strings.Join(writers, "; ")
	if !p.opts.Force {
		return refuse(KindInUse, p.opts.Src, "SRC is written while it is read, mounted read-write: "+why+": a live file system copies inconsistently; unmount it or remount it read-only (mount -o remount,ro), copy a snapshot, or Options.Force copies it anyway").on("Src")
	}
	if p.Forced != "" {
		p.Forced += "; "
	}
	p.Forced += "SRC is mounted read-write: " + why
	p.note("Options.Force: reading %s although it is mounted read-write: %s", p.opts.Src, why)
	return nil
}
