package copier

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/units"
)

// Prepare's refusals on what guard finds of each end's filesystem and
// content. Their wording, and what Options.Force lifts, are decided here.

// checkPseudoFS refuses a SRC or DST (for a new DST: its folder) on a
// pseudo filesystem. A block device node is exempt: what it names is a
// disk wherever the node lives.
func (p *Plan) checkPseudoFS() error {
	if !p.src.isBlock && p.src.local() {
		if fs := guard.PseudoFS(p.src.path); fs != "" {
			return refuse(KindNotSupported, p.src.path, fmt.Sprintf("SRC is on %s, a pseudo filesystem: its files are kernel interfaces, not stored data, and their sizes are made up (read it with cat)", fs)).on("Src")
		}
	}
	if p.dst.fixedSize() {
		return nil
	}
	at, what := p.dst.fsPath(), "DST is"
	if !p.dst.exists {
		what = "DST's folder " + at + " is"
	}
	if fs := guard.PseudoFS(at); fs != "" {
		return refuse(KindNotSupported, p.dst.path, fmt.Sprintf("%s on %s, a pseudo filesystem: writing there changes the kernel, it stores no copy", what, fs)).on("Dst")
	}
	return nil
}

// checkEmptyDevice refuses a SRC block device of size 0: a device with
// nothing behind it (a loop device nothing is bound to, an nbd device
// whose client is not connected, a reader without its card). Copying it
// would replace DST by nothing and report success.
func (p *Plan) checkEmptyDevice() error {
	if !p.src.isBlock || p.src.geo.Size != 0 {
		return nil
	}
	return refuse(KindNotFound, p.src.path, "is a block device of size 0: nothing is behind it (a loop device with no file bound, an nbd device not connected?)").on("Src")
}

// checkNewInDev refuses to create a regular file on devtmpfs. A DST there
// that does not exist is a mistyped device node (/dev/loop2p2 for
// /dev/loop2p1, a disk not plugged in yet): the copy would land in RAM as
// a file named like a disk, with exit 0. Options.Force creates it anyway.
func (p *Plan) checkNewInDev() error {
	if p.dst.exists {
		return nil
	}
	mnt := guard.DevtmpfsMount(filepath.Dir(p.dst.path))
	switch {
	case mnt == "":
		return nil
	case p.opts.Force:
		p.forced("it is a new file in " + mnt + " (devtmpfs), not a device")
		return nil
	}
	return refuse(KindNotFound, p.dst.path, fmt.Sprintf("no such device; ringcp does not create files in %s, a devtmpfs (Options.Force does)", mnt)).on("Dst")
}

// forced records one more thing Options.Force overrode, for the line the
// command prints and for callers that log.
func (p *Plan) forced(why string) {
	if p.Forced != "" {
		p.Forced += "; "
	}
	p.Forced += why
	p.note("Options.Force: writing %s although %s", p.opts.Dst, why)
}

// checkWritable refuses an existing regular-file DST that the copy's open
// would fail on, so that it fails here, with nothing written: an
// append-only file (chattr +a), a running program (ETXTBSY), a read-only
// mount (EROFS), a write an LSM denies (EPERM). access(2) in inspectDest
// misses these. A block device gets no trial write-open: closing a
// block device opened for writing makes udev rescan it.
func (p *Plan) checkWritable() error {
	if !p.dst.exists || p.dst.fixedSize() {
		return nil
	}
	why, errno := guard.CheckWritable(p.dst.path)
	switch why {
	case guard.AppendOnly:
		return refuse(KindPermission, p.dst.path, "DST is append-only (chattr +a): it cannot be overwritten or truncated (chattr -a lifts it)").on("Dst")
	case guard.Running:
		return refuseErr(KindInUse, p.dst.path, "DST is busy: a program that is running, or an active swap file", errno).on("Dst")
	case guard.ReadOnly:
		return refuseErr(KindPermission, p.dst.path, "DST is on a read-only filesystem", errno).on("Dst")
	case guard.Denied:
		return refuseErr(KindPermission, p.dst.path, "DST may not be written", errno).on("Dst")
	}
	return nil // anything else: the open for the copy says it
}

// checkFileLimit refuses a copy that would end past the largest file DST's
// filesystem allows, before the write that gets EFBIG. Where that cannot
// be told, the overflow checks of checkRange remain.
func (p *Plan) checkFileLimit() error {
	if p.dst.fixedSize() {
		return nil // checkDestSize compares with the device's or export's size
	}
	end := p.opts.DstOffset + p.Length
	if limit, ok := guard.FileLimit(p.dst.fsPath(), end); !ok {
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
func (p *Plan) checkImageFormat() error {
	o := &p.opts
	if o.SrcFormat == SrcFormatRaw || o.SrcOffset != 0 || p.Length == 0 || !p.src.local() {
		return nil
	}
	format, where := guard.ImageFormat(o.Src, p.src.geo.Size, p.Length)
	switch format {
	case "":
		return nil
	case "luks":
		// LUKS is raw to qemu too: the encrypted volume, copied byte for
		// byte, opens with the same passphrase. Nothing to convert.
		p.note("SRC is a LUKS volume: copied as it is, still encrypted")
		return nil
	}
	return refuse(KindImageFormat, o.Src, fmt.Sprintf("SRC is a %s disk image (%s), not raw disk bytes: convert it with qemu-img convert -f %s -O raw %s %s, or pass Options.SrcFormat raw to copy the image file as it is",
		format, where, format, shellQuote(o.Src), shellQuote(o.Dst))).on("Src")
}

// checkDstImageFormat refuses an existing DST that is a disk image
// container: raw bytes written over its header leave a file no program
// opens as an image, nor as the disk it held. Whoever means to write raw
// bytes there says so with Options.DstFormat raw (or Force). Every kind
// guard names counts but LUKS, whose volume a raw copy overwrites as any
// other disk. Only a DST whose header the copy writes (DstOffset 0, or a
// cut that drops it) is looked at.
func (p *Plan) checkDstImageFormat() error {
	o := &p.opts
	if !p.dst.exists || !p.dst.local() || o.DstFormat == SrcFormatRaw || (o.DstOffset != 0 && !p.truncate) {
		return nil
	}
	size := p.dst.geo.Size
	format, where := guard.ImageFormat(o.Dst, size, size)
	if format == "" || format == "luks" {
		return nil
	}
	if o.Force {
		p.forced(fmt.Sprintf("it is a %s disk image (%s)", format, where))
		return nil
	}
	return refuse(KindImageFormat, o.Dst, fmt.Sprintf("DST is a %s disk image (%s): raw bytes written over it leave neither the image nor a disk; convert with qemu-img convert -O %s %s %s, or pass Options.DstFormat raw (or Options.Force) to overwrite it with raw bytes",
		format, where, format, shellQuote(o.Src), shellQuote(o.Dst))).on("Dst")
}

// shellQuote makes path safe to paste into a shell command line.
func shellQuote(path string) string {
	if path != "" && strings.Trim(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:,@%=") == "" {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
