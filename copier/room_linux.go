package copier

import (
	"fmt"
	"io"
	"os"

	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/units"
)

// checkRoom refuses a copy into a file when its filesystem clearly lacks
// the room, instead of failing with ENOSPC after most of the data moved.
//
// Needed: the whole range with --sparse never; else the data DST will
// get, which is SRC's data extents in the range (SEEK_DATA/SEEK_HOLE; a
// device is all data) less the blocks that are all zeros, which zero
// detection leaves as holes (a dd'ed image is full of them). The zeros
// are only known by reading, so only when the data does not fit anyway is
// it read (guard.NonZero: whole, or in samples), and an estimate refuses
// only beyond a margin.
//
// Available: free blocks (guard.Free), plus what DST gives back: all its
// blocks when it is truncated, at most the range's length of them when it
// is overwritten in place (preallocated blocks read as holes to
// SEEK_DATA, so its block count is the honest bound).
//
// A block device has its size check. A reflink needs no room, but may be
// refused by the filesystem (XFS made with reflink=0): then the refusal
// is kept (roomShort) and Run gives it, before DST is cut, if the reflink
// does not happen. A filesystem that compresses may fit more:
// Options.Force tries anyway, and the runtime ENOSPC path stays for what
// cannot be known here.
func (p *Plan) checkRoom() error {
	if p.dst.fixedSize() || p.Length == 0 {
		return nil
	}
	free, err := p.roomFree()
	if err != nil {
		return nil
	}
	r, err := p.roomNeeded(free)
	if err != nil || r.need <= free+r.margin {
		return nil
	}
	about := ""
	if r.sampled {
		about = "about "
	}
	short := fmt.Sprintf("DST's filesystem has %s free, the copy needs %s%s (%d bytes)%s", units.Format(free), about, units.Format(r.need), r.need, r.how)
	if p.opts.Force {
		p.forced(short)
		return nil
	}
	err = refuse(KindNoRoom, p.opts.Dst, short+" (Options.Force tries anyway)").on("Dst")
	if p.offloadMode == OffloadReflink {
		p.roomShort = err
		return nil
	}
	return err
}

// room is what the copy allocates on DST: exactly, or estimated within
// margin, and how it was found, for the refusal.
type room struct {
	need, margin int64
	how          string // what need counts, when not the plain range or extents
	sampled      bool
}

// roomNeeded says how much the copy allocates on DST, reading SRC only
// when its data exceeds free.
func (p *Plan) roomNeeded(free int64) (room, error) {
	o := &p.opts
	if o.Sparse == SparseNever {
		return room{need: p.Length}, nil
	}
	if !p.src.local() {
		return p.exportRoom(free)
	}
	f, err := os.OpenFile(o.Src, inspectFlags, 0)
	if err != nil {
		return room{}, err
	}
	defer f.Close()
	ext := guard.Extents{{Off: o.SrcOffset, N: p.Length}}
	if !p.src.isBlock {
		if ext, err = guard.DataExtents(int(f.Fd()), o.SrcOffset, o.SrcOffset+p.Length); err != nil {
			// The filesystem cannot map holes (EINVAL on some FUSE and
			// network filesystems): the engine reads it all as data too.
			ext = guard.Extents{{Off: o.SrcOffset, N: p.Length}}
		}
	}
	data := ext.Bytes()
	if data <= free || p.sparse.ZeroBlock == 0 {
		return room{need: data}, nil
	}
	return nonZeroRoom(f, ext, data, p.sparse.ZeroBlock)
}

// nonZeroRoom is the room SRC's data needs without its zero blocks,
// which guard.NonZero finds by reading it whole, or a sample of it.
func nonZeroRoom(src io.ReaderAt, ext guard.Extents, data int64, zeroBlock int) (room, error) {
	e, err := guard.NonZero(src, ext, data, zeroBlock)
	if err != nil {
		return room{}, err
	}
	r := room{need: e.Need, margin: e.Margin, sampled: e.Sampled, how: " of SRC's data that is not zeros"}
	if e.Sampled {
		r.how += ", judged by a sample"
	}
	return r, nil
}

// givenBack is what DST hands back to its filesystem: all its
// blocks when it is cut, at most the range's length of them when it is
// overwritten in place (roomFree).
func (p *Plan) givenBack() int64 {
	if !p.dst.exists {
		return 0
	}
	held := guard.Allocated(&p.dst.st)
	if !p.truncate {
		held = min(held, p.Length)
	}
	return held
}

// roomFree is what DST's filesystem can give the copy, counting what DST
// itself gives back.
func (p *Plan) roomFree() (int64, error) {
	return guard.Free(p.dst.fsPath(), p.givenBack())
}
