package copier

import (
	"context"
	"errors"
	"fmt"
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
	o := &p.opts
	p.offload = OffloadNever
	if o.Offload == OffloadNever {
		return nil
	}
	forced := o.Offload != OffloadAuto
	if p.src.isBlock || p.dst.isBlock {
		if forced {
			return refuse("", fmt.Sprintf("--offload %s: block devices have no copy offload", o.Offload))
		}
		return nil
	}
	if forced {
		p.offload = o.Offload
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
			p.offload = OffloadReflink
			p.note("offload reflink: SRC and DST share a filesystem that can share extents")
		}
	case magicNFS, magicSMB2, magicCIFS, magicCeph:
		p.offload = OffloadCopyRange
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

// offload asks the filesystem to copy. handled is false, with the reason
// in err, when it could not: then DST holds no partial result the engine
// would trust (a file this copy owns is emptied again; otherwise the
// engine is told DST no longer reads as zeros).
func (p *Plan) tryOffload(ctx context.Context, files engine.Files) (handled bool, err error) {
	src, dst := int(files[engine.FileSrc].Fd()), int(files[engine.FileDst].Fd())
	o := &p.opts
	var moved int64
	if p.offload == OffloadReflink {
		err = p.reflink(src, dst)
	} else {
		moved, err = p.copyRangeBuffered(ctx, files)
	}
	if err == nil {
		return true, nil
	}
	if moved > 0 || p.offload == OffloadCopyRange {
		if p.truncate || !p.dst.exists {
			if terr := unix.Ftruncate(dst, 0); terr != nil {
				return false, errors.Join(err, terr)
			}
		} else {
			p.sparse.DstZeroed = false
		}
	}
	if o.Progress != nil {
		o.Progress.Done.Add(-moved)
	}
	return false, err
}

// reflink shares SRC's extents with DST: FICLONE for a whole file,
// FICLONERANGE for a range (whose offsets must be block aligned).
func (p *Plan) reflink(src, dst int) error {
	o := &p.opts
	if o.SrcOffset == 0 && o.DstOffset == 0 && !o.LengthSet {
		return wrapOffload("FICLONE", unix.IoctlFileClone(dst, src))
	}
	r := unix.FileCloneRange{Src_fd: int64(src), Src_offset: uint64(o.SrcOffset),
		Src_length: uint64(p.Length), Dest_offset: uint64(o.DstOffset)}
	return wrapOffload("FICLONERANGE", unix.IoctlFileCloneRange(dst, &r))
}

// copyRangeBuffered runs copyRange on descriptors without O_DIRECT: where
// copy_file_range falls back to an in-kernel splice (ext4), O_DIRECT ones
// get EINVAL.
func (p *Plan) copyRangeBuffered(ctx context.Context, files engine.Files) (int64, error) {
	src, err := openChecked(&p.src, os.O_RDONLY)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	dst := files[engine.FileDstTail] // DST without O_DIRECT, when DST is direct
	if dst == nil {
		dst = files[engine.FileDst]
	}
	return p.copyRange(ctx, int(src.Fd()), int(dst.Fd()))
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
		n, err := unix.CopyFileRange(src, &roff, dst, &woff, int(min(left, step)), 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return p.Length - left, wrapOffload("copy_file_range", err)
		}
		if n == 0 {
			return p.Length - left, &engine.OpError{Op: "copy_file_range", Path: p.src.path, Offset: roff, Err: engine.ErrSourceShrank}
		}
		left -= int64(n)
		if o.Progress != nil {
			o.Progress.Done.Add(int64(n))
		}
	}
	return p.Length, nil
}

func wrapOffload(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}

// finishOffload gives DST its size, syncs it, and names it: what the
// engine and publish do after an engine copy.
func (p *Plan) finishOffload(d *dest, rep *Report) error {
	end := p.opts.DstOffset + p.Length
	fd := int(d.f.Fd())
	if p.truncate || !p.dst.exists {
		if err := unix.Ftruncate(fd, end); err != nil {
			return &engine.OpError{Op: "truncate", Path: p.dst.path, Offset: end, Err: err}
		}
	}
	if !p.opts.NoSync {
		if err := unix.Fdatasync(fd); err != nil {
			return &engine.OpError{Op: "fdatasync", Path: p.dst.path, Offset: p.opts.DstOffset, Err: err}
		}
		rep.Synced = true
	}
	return d.publish(p.dst.path, !p.opts.NoSync)
}
