package copier

import (
	"context"
	"errors"
	"fmt"
	"github.com/ringcp/ringcp/internal/eintr"
	"os"
	"path/filepath"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
)

// Filesystem magics (statfs f_type) that decide offload in auto mode.
const (
	magicBtrfs    = 0x9123683e
	magicXFS      = 0x58465342
	magicOCFS2    = 0x7461636f
	magicBcachefs = 0xca451a4e
	magicNFS      = 0x6969
	magicSMB2     = 0xfe534d42
	magicCIFS     = 0xff534d42
	magicCeph     = 0x00c36400
)

// chooseOffload decides whether the filesystem is asked to copy first.
// Auto asks only where it is cheaper for sure: a reflink shares extents
// instead of moving bytes, and copy_file_range on a network filesystem has
// the server copy. On ext4 and the like copy_file_range copies through the
// page cache, slower and costlier than the engine, so auto leaves it.
func (p *Plan) chooseOffload() error {
	err := p.chooseOffloadMode()
	if err != nil || p.offloadMode == OffloadNever || !p.opts.needsData() {
		return err
	}
	if p.opts.Offload != OffloadAuto {
		return refuse(KindBadInput, "", fmt.Sprintf("offload %s: the data would not pass through ringcp, which verification, checksums and resuming need", p.opts.Offload))
	}
	p.offloadMode = OffloadNever
	p.note("offload off: verification, checksums and resuming need the data to pass through ringcp")
	return nil
}

// chooseOffloadMode is what the ends' filesystems allow.
func (p *Plan) chooseOffloadMode() error {
	o := &p.opts
	p.offloadMode = OffloadNever
	if o.Offload == OffloadNever || p.Length == 0 {
		// A zero-length range copies nothing, on every path: FICLONERANGE
		// would read length 0 as "to the end of SRC".
		return nil
	}
	forced := o.Offload != OffloadAuto
	for _, ep := range []*endpoint{p.src, p.dst} {
		if ep.offloads {
			continue
		}
		if forced {
			return refuse(KindNotSupported, "", fmt.Sprintf("Options.Offload %s: %s %s (%s) has no copy offload: only files have one", o.Offload, ep.role.tag(), ep.path, ep.what)).on("Offload")
		}
		return nil
	}
	if forced {
		p.offloadMode = o.Offload
		p.note("offload %s: asked for; the engine takes over if it fails", o.Offload)
		return nil
	}
	srcFS, dstFS, ok := p.filesystems()
	if !ok || srcFS.Fsid != dstFS.Fsid {
		return nil // a reflink needs one filesystem; so does a server-side copy
	}
	ranged := o.SrcOffset != 0 || o.DstOffset != 0 || o.LengthSet
	switch uint32(dstFS.Type) {
	case magicBtrfs, magicXFS, magicOCFS2, magicBcachefs:
		if !ranged {
			p.offloadMode = OffloadReflink
			p.note("offload reflink: SRC and DST share a filesystem that can share extents")
		}
	case magicNFS, magicSMB2, magicCIFS, magicCeph:
		if o.MaxRate > 0 || o.Yield {
			p.note("no offload: a server-side copy would not keep to the rate cap or yield")
			return nil
		}
		p.offloadMode = OffloadCopyRange
		p.note("offload copy-range: a network filesystem copies on the server")
	}
	return nil
}

func (p *Plan) filesystems() (src, dst unix.Statfs_t, ok bool) {
	dstPath := p.dst.path
	if !p.dst.exists {
		dstPath = filepath.Dir(dstPath)
	}
	if unix.Statfs(p.src.path, &src) != nil || unix.Statfs(dstPath, &dst) != nil {
		return src, dst, false
	}
	return src, dst, true
}

// offload asks the filesystem to copy the range, as os.File.ReadFrom asks
// copy_file_range before it copies by hand. handled is false only when
// nothing moved and the errno says the filesystem cannot do it here (see
// notOffloadable): then DST is as it was and the engine copies. Otherwise
// n bytes from the start of the range are on DST, and err, if not nil, is
// why the rest is not: a real failure (ENOSPC, EIO), or the context.
//
// Both descriptors run without O_DIRECT meanwhile: where copy_file_range
// falls back to an in-kernel splice (ext4), O_DIRECT ones get EINVAL. The
// flags are restored for the engine when the offload was not handled.
func (p *Plan) offload(ctx context.Context, src, dst *os.File) (n int64, handled bool, err error) {
	if err := ctx.Err(); err != nil {
		return 0, true, err
	}
	if err := buffered(src, dst); err != nil {
		return 0, false, err
	}
	if p.offloadMode == OffloadReflink {
		n, err = p.reflink(int(src.Fd()), int(dst.Fd()))
	} else {
		n, err = p.copyRange(ctx, int(src.Fd()), int(dst.Fd()))
	}
	if n == 0 && err != nil && notOffloadable(err) {
		return 0, false, errors.Join(err, p.restoreDirect(src, dst))
	}
	return n, true, err
}

// notOffloadable lists the errnos by which FICLONE, FICLONERANGE and
// copy_file_range say "not here" rather than "failed":
//   - EOPNOTSUPP, ENOTTY, ENOSYS: the filesystem (or an old kernel) has no
//     such call;
//   - EXDEV: SRC and DST are on different filesystems (or, before 5.19,
//     copy_file_range across filesystem types);
//   - EINVAL: FICLONERANGE offsets or length not block aligned, files that
//     cannot share extents (different block sizes, inline data), a file
//     opened O_APPEND;
//   - ETXTBSY, EPERM on an immutable or swap file are refused by Prepare.
//
// Anything else (ENOSPC, EIO, EDQUOT, EINTR past its retries) is a real
// failure of the copy.
func notOffloadable(err error) bool {
	for _, e := range []unix.Errno{unix.EOPNOTSUPP, unix.ENOTTY, unix.ENOSYS, unix.EXDEV, unix.EINVAL} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// buffered turns O_DIRECT off on both descriptors for the offload.
func buffered(src, dst *os.File) error {
	return errors.Join(setFlag(src, unix.O_DIRECT, false), setFlag(dst, unix.O_DIRECT, false))
}

// restoreDirect gives the descriptors back the O_DIRECT the plan chose.
func (p *Plan) restoreDirect(src, dst *os.File) error {
	return errors.Join(setFlag(src, unix.O_DIRECT, p.src.direct), setFlag(dst, unix.O_DIRECT, p.dst.direct))
}

// reflink shares SRC's extents with DST: FICLONE for a whole file,
// FICLONERANGE for a range (whose offsets must be block aligned). Either
// moves the whole range or nothing.
func (p *Plan) reflink(src, dst int) (int64, error) {
	o := &p.opts
	var err error
	if o.SrcOffset == 0 && o.DstOffset == 0 && !o.LengthSet {
		err = wrapOffload("FICLONE", unix.IoctlFileClone(dst, src))
	} else {
		r := unix.FileCloneRange{Src_fd: int64(src), Src_offset: uint64(o.SrcOffset),
			Src_length: uint64(p.Length), Dest_offset: uint64(o.DstOffset)}
		err = wrapOffload("FICLONERANGE", unix.IoctlFileCloneRange(dst, &r))
	}
	if err != nil {
		return 0, err
	}
	p.addProgress(p.Length)
	return p.Length, nil
}

// copyRange moves the range with copy_file_range, in steps so a
// cancellation is seen and progress shows.
func (p *Plan) copyRange(ctx context.Context, src, dst int) (int64, error) {
	const step = 1 << 30
	o := &p.opts
	roff, woff, left := o.SrcOffset, o.DstOffset, p.Length
	for left > 0 {
		if err := ctx.Err(); err != nil {
			return p.Length - left, err
		}
		n, err := eintr.Retry(func() (int, error) { return unix.CopyFileRange(src, &roff, dst, &woff, int(min(left, step)), 0) })
		if err != nil {
			return p.Length - left, &engine.OpError{Op: "copy_file_range", Path: p.dst.path, Offset: woff, Err: err}
		}
		if n == 0 {
			return p.Length - left, &engine.OpError{Op: "copy_file_range", Path: p.src.path, Offset: roff, Err: engine.ErrSourceShrank}
		}
		left -= int64(n)
		p.addProgress(int64(n))
	}
	return p.Length, nil
}

func (p *Plan) addProgress(n int64) {
	if pr := p.opts.Progress; pr != nil {
		pr.Read.Add(n)
		pr.Data.Add(n) // the split first: Done is never more than its parts
		pr.Done.Add(n)
	}
}

func wrapOffload(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}
