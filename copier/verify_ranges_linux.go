package copier

import (
	"context"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// A restricted copy (Options.Extents, an NBD SRC's DirtyBitmap) with
// Options.Verify checks what it meant to make equal: after the barrier,
// SRC and DST are read side by side over the ranges it copied (widened to
// whole O_DIRECT units, as the copy wrote them: those bytes came from SRC
// too) and compared byte for byte. The copy's cell digests (digest.go)
// would cover the whole range, most of which a restricted copy neither
// reads nor writes; its ranges are usually a small part of it, so reading
// SRC's side again costs about what reading DST's does. DST is read as
// every read-back reads it (dest.readBack: O_DIRECT, or buffered after
// fdatasync and POSIX_FADV_DONTNEED), so that its bytes come from the
// device, not from the pages the copy wrote.

// verifiesRanges: the copy verifies its ranges rather than its cells.
func (p *Plan) verifiesRanges() bool { return p.opts.Verify && p.changed.restricted }

// verifyRanges compares SRC and DST over the copy's ranges and returns a
// *MismatchError at the first byte that differs.
func (p *Plan) verifyRanges(ctx context.Context, a *acquired, rep *Report) error {
	start := time.Now()
	progress := p.opts.Progress // normalize made one
	progress.SetPhase(engine.PhaseVerify)
	how, err := a.dst.readBack(p)
	if err != nil {
		return err
	}
	cmp := newComparer(0, progress)
	job := a.passJob(p, p.Length, cmp.check)
	a.src.into(&job, engine.FileSrc)
	a.dst.held().into(&job, engine.FileDst)
	job.SrcOff, job.DstOff = p.opts.SrcOffset, p.opts.DstOffset
	job.SrcAlign, job.DstAlign = a.src.align, a.dst.held().align
	unit := int64(max(job.SrcAlign, job.DstAlign, 1))
	job.RangesOnly, job.Ranges = true, p.changed.ranges.AlignOut(unit, job.Length)
	if _, err := p.readPass(ctx, job); err != nil {
		return err
	}
	vr := &VerifyReport{Bytes: job.Ranges.Total(), Seconds: time.Since(start).Seconds(), BadBlocks: cmp.bad.count,
		FirstBad: -1, How: how + "; SRC read again beside DST over the ranges copied"}
	rep.Verify = vr
	if cmp.bad.count == 0 {
		return nil
	}
	e := &MismatchError{Path: p.dst.path, RangeOff: cmp.first, Offset: p.opts.DstOffset + cmp.first,
		BadBlocks: cmp.bad.count, Blocks: cells(p.Length)}
	vr.FirstBad = e.Offset
	return e
}
