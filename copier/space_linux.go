package copier

import (
	"fmt"
	"io"

	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/units"
)

// checkSpace refuses a copy into a file when its filesystem clearly lacks
// the free space, instead of failing with ENOSPC after most of the data
// moved.
//
// Needed: the whole range with --sparse never; else the data DST will
// get, which is SRC's data extents in the range (SEEK_DATA/SEEK_HOLE; a
// device is all data) less the blocks that are all zeros, which zero
// detection leaves as holes (a dd'ed image is full of them). The zeros
// are only known by reading, so only when the data does not fit anyway is
// it read (guard.NonZero: whole, or in samples), and an estimate refuses
// only beyond a margin.
//
// Available: free blocks (guard.Free), plus what DST gives back (its
// kind's space: a file's blocks when it is cut or overwritten, reclaimed).
//
// A block device or an export has its size check, and takes no space. A
// reflink needs none, but may be refused by the filesystem (XFS made
// with reflink=0): then the refusal is kept (spaceShort) and Run gives it,
// before DST is cut, if the reflink does not happen. A filesystem that
// compresses may fit more: Options.Force tries anyway, and the runtime
// ENOSPC path stays for what cannot be known here.
func (p *Plan) checkSpace() error {
	at, takes := p.dst.space(p)
	if !takes || p.Length == 0 {
		return nil
	}
	free, err := guard.Free(at.at, at.reclaimed)
	if err != nil {
		return nil
	}
	r, err := p.spaceNeeded(free)
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
		p.spaceShort = err
		return nil
	}
	return err
}

// spaceNeed is what the copy allocates on DST: exactly, or estimated within
// margin, and how it was found, for the refusal.
type spaceNeed struct {
	need, margin int64
	how          string // what need counts, when not the plain range or extents
	sampled      bool
}

// spaceNeeded says how much the copy allocates on DST, reading SRC only
// when its data exceeds free.
func (p *Plan) spaceNeeded(free int64) (spaceNeed, error) {
	if p.opts.Sparse == SparseNever {
		return spaceNeed{need: p.Length}, nil
	}
	d, err := p.src.srcData(p)
	if err != nil {
		return spaceNeed{}, err
	}
	if d.close != nil {
		defer d.close()
	}
	data := d.ext.Bytes()
	if data <= free || p.sparse.ZeroBlock == 0 || data == 0 || d.read == nil {
		return spaceNeed{need: data, how: d.how}, nil
	}
	return nonZeroSpace(d.read, d.ext, data, p.sparse.ZeroBlock)
}

// nonZeroSpace is the space SRC's data needs without its zero blocks,
// which guard.NonZero finds by reading it whole, or a sample of it.
func nonZeroSpace(src io.ReaderAt, ext guard.Extents, data int64, zeroBlock int) (spaceNeed, error) {
	e, err := guard.NonZero(src, ext, data, zeroBlock)
	if err != nil {
		return spaceNeed{}, err
	}
	r := spaceNeed{need: e.Need, margin: e.Margin, sampled: e.Sampled, how: " of SRC's data that is not zeros"}
	if e.Sampled {
		r.how += ", judged by a sample"
	}
	return r, nil
}
