package copier

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/units"
)

// A file or device's refusals on what guard finds of it, its filesystem
// and its content. Their wording, and what Options.Force lifts, are
// decided here.

// checkAlone refuses a SRC or DST (for a new DST: its folder) on a pseudo
// filesystem, and a SRC that is an empty block device.
func (f *fileEnd) checkAlone(p *Plan) error {
	if err := f.checkPseudoFS(); err != nil {
		return err
	}
	if f.ep.role == roleSrc {
		return f.checkEmptyDevice()
	}
	return nil
}

// check refuses what keeps the copy from using the end as it is: SRC is
// not held for writing by others, not mounted read-write, and is not a
// disk image container; DST is not in use, locked, on a read-only or
// devtmpfs filesystem, too small a filesystem for the file, or a disk
// image container.
func (f *fileEnd) check(p *Plan) error {
	var checks []func(*Plan) error
	if f.ep.role == roleSrc {
		checks = []func(*Plan) error{f.checkSrcLocks, f.checkSrcWriters, f.checkImageFormat}
	} else {
		checks = []func(*Plan) error{f.checkResumed, f.checkInUse, f.checkDstLocks, f.checkNewInDev, f.checkWritable, f.checkFileLimit, f.checkDstImageFormat}
	}
	for _, c := range checks {
		if err := c(p); err != nil {
			return err
		}
	}
	return nil
}

// checkPseudoFS refuses the end (for a new DST: its folder) on a pseudo
// filesystem. A block device node is exempt: what it names is a disk
// wherever the node lives.
func (f *fileEnd) checkPseudoFS() error {
	ep := f.ep
	if f.isBlock {
		return nil
	}
	if ep.role == roleSrc {
		if fs := guard.PseudoFS(ep.path); fs != "" {
			return refuse(KindNotSupported, ep.path, fmt.Sprintf("SRC is on %s, a pseudo filesystem: its files are kernel interfaces, not stored data, and their sizes are made up (read it with cat)", fs)).on("Src")
		}
		return nil
	}
	at, what := f.fsPath(), "DST is"
	if !ep.exists {
		what = "DST's folder " + at + " is"
	}
	if fs := guard.PseudoFS(at); fs != "" {
		return refuse(KindNotSupported, ep.path, fmt.Sprintf("%s on %s, a pseudo filesystem: writing there changes the kernel, it stores no copy", what, fs)).on("Dst")
	}
	return nil
}

// checkEmptyDevice refuses a SRC block device of size 0: a device with
// nothing behind it (a loop device nothing is bound to, an nbd device
// whose client is not connected, a reader without its card). Copying it
// would replace DST by nothing and report success.
func (f *fileEnd) checkEmptyDevice() error {
	if !f.isBlock || f.ep.geo.Size != 0 {
		return nil
	}
	return refuse(KindNotFound, f.ep.path, "is a block device of size 0: nothing is behind it (a loop device with no file bound, an nbd device not connected?)").on("Src")
}

// checkNewInDev refuses to create a regular file on devtmpfs. A DST there
// that does not exist is a mistyped device node (/dev/loop2p2 for
// /dev/loop2p1, a disk not plugged in yet): the copy would land in RAM as
// a file named like a disk, with exit 0. Options.Force creates it anyway.
func (f *fileEnd) checkNewInDev(p *Plan) error {
	if f.ep.exists {
		return nil
	}
	mnt := guard.DevtmpfsMount(filepath.Dir(f.ep.path))
	switch {
	case mnt == "":
		return nil
	case p.opts.Force:
		p.forced("it is a new file in " + mnt + " (devtmpfs), not a device")
		return nil
	}
	return refuse(KindNotFound, f.ep.path, fmt.Sprintf("no such device; ringcp does not create files in %s, a devtmpfs (Options.Force does)", mnt)).on("Dst")
}

// checkWritable refuses an existing regular-file DST that the copy's open
// would fail on, so that it fails here, with nothing written: an
// append-only file (chattr +a), a running program (ETXTBSY), a read-only
// mount (EROFS), a write an LSM denies (EPERM). access(2) in inspectDest
// misses these. A block device gets no trial write-open: closing a
// block device opened for writing makes udev rescan it.
func (f *fileEnd) checkWritable(p *Plan) error {
	if !f.ep.exists || f.isBlock {
		return nil
	}
	path := f.ep.path
	why, errno := guard.CheckWritable(path)
	switch why {
	case guard.AppendOnly:
		return refuse(KindPermission, path, "DST is append-only (chattr +a): it cannot be overwritten or truncated (chattr -a lifts it)").on("Dst")
	case guard.Running:
		return refuseErr(KindInUse, path, "DST is busy: a program that is running, or an active swap file", errno).on("Dst")
	case guard.ReadOnly:
		return refuseErr(KindPermission, path, "DST is on a read-only filesystem", errno).on("Dst")
	case guard.Denied:
		return refuseErr(KindPermission, path, "DST may not be written", errno).on("Dst")
	}
	return nil // anything else: the open for the copy says it
}

// checkFileLimit refuses a copy that would end past the largest file DST's
// filesystem allows, before the write that gets EFBIG. Where that cannot
// be told, the overflow checks of checkRange remain.
func (f *fileEnd) checkFileLimit(p *Plan) error {
	if f.isBlock || p.src.openEnded {
		// checkDestSize compares with the device's size; a SRC of unknown
		// size ends where it ends, and a write past the limit fails.
		return nil
	}
	end := p.opts.DstOffset + p.Length
	if limit, ok := guard.FileLimit(f.fsPath(), end); !ok {
		r := refuse(KindTooSmall, p.opts.Dst, fmt.Sprintf("the copy would end at byte %d (%s), past the largest file DST's filesystem allows (%d bytes, %s)",
			end, units.Format(end), limit, units.Format(limit))).on("Dst")
		r.Needed = end
		return r
	}
	return nil
}

// checkImageFormat refuses a SRC that is a disk image container (qcow2,
// vmdk, vhdx, vdi, vpc, qed): its bytes are the container, not the disk
// inside. Only a range that starts at 0 is checked: a header elsewhere is
// data. Options.SrcFormat "raw" copies the bytes as they are.
func (f *fileEnd) checkImageFormat(p *Plan) error {
	o := &p.opts
	if _, image := p.src.end.(layered); image || o.SrcFormat == FormatRaw || o.SrcOffset != 0 || p.Length == 0 {
		return nil // an image read by its format, or bytes asked for as they are
	}
	format, where := guard.ImageFormat(o.Src, f.ep.geo.Size, p.Length)
	switch format {
	case "":
		return nil
	case "luks":
		// LUKS is raw to qemu too: the encrypted volume, copied byte for
		// byte, opens with the same passphrase. Nothing to convert.
		p.note("SRC is a LUKS volume: copied as it is, still encrypted")
		return nil
	}
	return refuse(KindImageFormat, o.Src, fmt.Sprintf("SRC is a %s disk image (%s), not raw disk bytes: convert it with qemu-img convert -f %s -O raw %s %s, or pass Options.SrcFormat raw to copy the image file as it is (ringcp reads qcow2 itself)",
		format, where, format, shellQuote(o.Src), shellQuote(o.Dst))).on("Src")
}

// checkDstImageFormat refuses an existing DST that is a disk image
// container: raw bytes written over its header leave a file no program
// opens as an image, nor as the disk it held. Whoever means to write raw
// bytes there says so with Options.DstFormat raw (or Force). Every kind
// guard names counts but LUKS, whose volume a raw copy overwrites as any
// other disk. Only a DST whose header the copy writes (DstOffset 0, or a
// cut that drops it) is looked at.
func (f *fileEnd) checkDstImageFormat(p *Plan) error {
	o := &p.opts
	if !f.ep.exists || o.DstFormat == SrcFormatRaw || (o.DstOffset != 0 && !p.truncate) {
		return nil
	}
	size := f.ep.geo.Size
	format, where := guard.ImageFormat(o.Dst, size, size)
	if format == "" || format == "luks" {
		return nil
	}
	if o.Force {
		p.forced(fmt.Sprintf("it is a %s disk image (%s)", format, where))
		return nil
	}
	return refuse(KindImageFormat, o.Dst, fmt.Sprintf("DST is a %s disk image (%s): raw bytes written over it leave neither the image nor a disk; convert with qemu-img convert -O %s %s %s, or pass Options.DstFormat raw or Options.Force to overwrite it with raw bytes",
		format, where, format, shellQuote(o.Src), shellQuote(o.Dst))).on("Dst")
}

// shellQuote makes path safe to paste into a shell command line.
func shellQuote(path string) string {
	if path != "" && strings.Trim(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:,@%=") == "" {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
