package copier

import (
	"fmt"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/extents"
	"github.com/ringcp/ringcp/internal/units"
	"golang.org/x/sys/unix"
)

// checkChanged refuses what a restricted copy or a sync cannot be, and
// reads the ranges (an NBD SRC's dirty bitmap included): before any
// write, like every refusal.
func (p *Plan) checkChanged() error {
	o := &p.opts
	if !o.restricted() && !o.Sync && o.SyncGranule == 0 {
		return nil
	}
	field := "Sync"
	if o.restricted() {
		field = map[bool]string{true: "Extents", false: "DirtyBitmap"}[o.ExtentsSet]
	}
	bad := func(kind Kind, reason string) error { return refuse(kind, "", reason).on(field) }
	switch {
	case !o.Sync && o.SyncGranule != 0:
		return refuse(KindBadInput, "", "a granule is a sync's: copies write every byte of their range").on("SyncGranule")
	case o.Sync && o.restricted():
		return bad(KindBadInput, "a sync compares all of SRC: extents and dirty bitmaps restrict a copy, not a sync")
	case o.SrcOffset != 0 || o.DstOffset != 0 || o.LengthSet:
		return bad(KindBadInput, "offsets and a length do not go with a sync or an extent list (its offsets are SRC's and DST's)")
	case o.Resume && o.restricted():
		return bad(KindNotSupported, "resuming a restricted copy is not supported: run it again")
	case o.Checksum != nil:
		return bad(KindNotSupported, "a checksum needs the whole of SRC to pass through the copy")
	case o.restricted() && o.ExpectChecksum != "":
		return bad(KindNotSupported, "Options.ExpectChecksum is the digest of all of SRC: a copy of some of its ranges does not read it all")
	case o.Sync && o.TargetIsZero:
		return bad(KindBadInput, "a sync reads DST: it cannot be vouched zero")
	case o.DirtyBitmap != "" && !isExport(p.src):
		return bad(KindBadInput, fmt.Sprintf("a dirty bitmap is read from an NBD SRC; %s is a %s", p.src.path, p.src.what))
	case o.restricted() && !p.dst.exists:
		return refuse(KindNotFound, p.opts.Dst, "a restricted copy writes into an existing DST: it does not exist").on("Dst")
	}
	p.changed.restricted, p.truncate = o.restricted(), false // DST keeps its bytes outside, and its size
	if o.Sync {
		return p.checkSync()
	}
	return p.readRanges()
}

// checkSync decides a sync: over an existing DST only (a new one is
// simply copied), with a granule the ends can write.
func (p *Plan) checkSync() error {
	o := &p.opts
	g := o.SyncGranule
	if g == 0 {
		g = DefaultSyncGranule
	}
	if g < 4096 || g > 64<<10 || g&(g-1) != 0 {
		return refuse(KindBadInput, "", fmt.Sprintf("Options.SyncGranule %d: want a power of two from 4096 to 65536", g)).on("SyncGranule")
	}
	if !p.dst.exists {
		p.truncate = p.cutsDst()
		p.note("sync: %s does not exist: a full copy", o.Dst)
		return nil
	}
	p.changed.syncing, p.changed.granule = true, g
	return nil
}

// readRanges checks the extent list against both ends and merges it,
// and reads the dirty bitmap of an NBD SRC.
func (p *Plan) readRanges() error {
	o := &p.opts
	var list extents.List
	if o.ExtentsSet {
		if err := extents.Check(o.Extents, p.src.geo.Size, p.dst.geo.Size); err != nil {
			return refuse(KindBadInput, "", err.Error()).on("Extents")
		}
		list = extents.Merge(extents.Ranges(o.Extents))
	}
	if o.DirtyBitmap != "" {
		dirty, err := p.src.end.(*exportEnd).dirty(p.src.geo.Size)
		if err != nil {
			return refuseErr(KindCheckFailed, p.src.path, fmt.Sprintf("cannot read the dirty bitmap %q", o.DirtyBitmap), err).on("DirtyBitmap")
		}
		if o.ExtentsSet {
			dirty = intersect(list, dirty)
		}
		if err := p.dirtyFits(dirty); err != nil {
			return err
		}
		list = dirty
	}
	p.changed.ranges = list
	p.note("only %d ranges, %s of %s", len(list), units.Format(list.Total()), units.Format(p.Length))
	return nil
}

// dirtyFits refuses a dirty extent past either end, as an extent list's
// is: a restricted copy keeps DST's size and writes nothing past it (a
// DST smaller than the export grew by the dirty extents at its end).
func (p *Plan) dirtyFits(dirty extents.List) error {
	for _, r := range dirty {
		if end, size := extents.PastEnd(r, p.src.geo.Size, p.dst.geo.Size); end != "" {
			return refuse(KindBadInput, "", fmt.Sprintf("the dirty bitmap %q marks %d+%d, which ends at %d, past the end of %s (%d bytes)",
				p.opts.DirtyBitmap, r.Off, r.Len, r.End(), end, size)).on("DirtyBitmap")
		}
	}
	return nil
}

// intersect is the bytes in both a and b.
func intersect(a, b extents.List) extents.List {
	var out []extents.Range
	for _, r := range b {
		out = append(out, a.Intersect(r.Off, r.End())...)
	}
	return extents.Merge(out)
}

// chooseChanged keeps copies that would move everything (offload) off a
// restricted copy or a sync; it runs after chooseOffload.
func (p *Plan) chooseChanged() error {
	if !p.changed.restricted && !p.changed.syncing {
		return nil
	}
	if p.opts.Offload != OffloadAuto && p.opts.Offload != OffloadNever {
		return refuse(KindBadInput, "", fmt.Sprintf("offload %s copies whole files: not a sync or a restricted copy", p.opts.Offload)).on("Offload")
	}
	p.offloadMode = OffloadNever
	g := 2 * p.changed.granule
	if p.opts.Verify {
		g = 2 * CellSize // the digests take whole cells: each half holds whole ones
	}
	if p.changed.syncing && p.BlockSize%g != 0 {
		// A slot holds a chunk of SRC and the same of DST, each whole
		// granules (whole cells with Verify): the block is a multiple of
		// two of them.
		p.BlockSize = (p.BlockSize/g + 1) * g
		p.note("sync: block size %d, a multiple of twice %d", p.BlockSize, g/2)
	}
	return nil
}

// workLength is the bytes the progress counts: a restricted copy's
// ranges, or the whole range.
func (p *Plan) workLength() int64 {
	if p.changed.restricted {
		return p.changed.ranges.Total()
	}
	return p.Length
}

// changedJob restricts the engine's job: ranges widened to whole
// O_DIRECT units of both ends (never past SRC's end), or the sync's
// granule. Neither preallocates: a restricted copy writes into DST's
// existing blocks, and a sync must not allocate what it leaves a hole.
func (p *Plan) changedJob(job *engine.Job) {
	c := &p.changed
	a := int64(max(job.SrcAlign, job.DstAlign, 1))
	switch {
	case c.restricted:
		job.RangesOnly, job.Ranges = true, c.ranges.AlignOut(a, job.Length)
		job.Preallocate, job.CutBackOnStop, job.FinalSize = false, false, 0
	case c.syncing:
		job.SyncGranule = max(c.granule, int(a))
		job.Preallocate, job.CutBackOnStop, job.FinalSize = false, false, 0
		job.MapHoles, job.DstZeroed = false, false
	}
}

// sizeForSync gives a file DST SRC's size before a sync: grown, the
// engine reads zeros past its old end; cut, nothing past SRC's end is
// kept anyway. It is the sync's first change to DST.
func (p *Plan) sizeForSync(d *dest) error {
	if !p.changed.syncing || d.end.isBlock || !d.end.ep.exists || d.size == p.Length {
		return nil
	}
	if err := unix.Ftruncate(int(d.f.Fd()), p.Length); err != nil {
		return fmt.Errorf("truncate %s to %d: %w", d.end.ep.path, p.Length, err)
	}
	return nil
}

// syncReport fills in what a sync or a restricted copy did.
func (p *Plan) syncReport(rep *Report, st engine.Stats) {
	c := &p.changed
	switch {
	case c.restricted:
		rep.Changed = &SyncReport{Ranges: len(c.ranges), RangeBytes: c.ranges.Total()}
	case c.syncing:
		g := int64(max(c.granule, 1))
		rep.Changed = &SyncReport{BytesReadDst: st.BytesReadDst, GranulesChanged: st.GranulesChanged,
			Granules: (p.Length + g - 1) / g}
	}
}
