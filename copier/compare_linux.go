package copier

import (
	"context"
	"fmt"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// Compare reads o.Src's and o.Dst's ranges side by side through the
// engine and says whether they hold the same bytes: nil, or a
// *MismatchError naming the first differing byte and counting the 4 MiB
// blocks that differ. Every byte is read on both sides (a hole reads as
// zeros, from memory).
//
// The range runs from the offsets for Length bytes, or to SRC's end. An
// end shorter than that differs where it ends; so does a regular file DST
// longer than SRC when the files are compared whole (no offsets, no
// length), as after a copy. A device DST may be longer: an image copied
// onto a disk is compared for the image's length.
func Compare(ctx context.Context, o ReadOptions) (ReadReport, error) {
	var want, endsAt int64
	p, err := prepareRead(o, func(p *Plan) (err error) { want, endsAt, err = p.compareRange(); return err })
	if err != nil {
		return ReadReport{}, err
	}
	defer p.Close() // an end not taken by the pass
	r, err := p.startRead(true)
	defer r.close()
	if err != nil {
		return ReadReport{}, refuseErr(KindResources, "", "nothing was read, the compare could not start", err)
	}
	start := time.Now()
	cmp := newComparer(0, p.opts.Progress)
	job := p.passJob(r.bufs.Slots, p.Length, cmp.check)
	r.src.into(&job, engine.FileSrc)
	r.dst.into(&job, engine.FileDst)
	job.SrcOff, job.DstOff = p.opts.SrcOffset, p.opts.DstOffset
	job.SrcAlign, job.DstAlign = r.src.align, r.dst.align
	meter := startReadProgress(o, p.opts.Progress, job.Progress, p.Length)
	st, err := p.readPass(ctx, job)
	err = r.explain(err)
	if err == nil {
		err = r.unchanged("the comparison")
	}
	meter.end(err == nil)
	rep := p.readReport(st, start)
	rep.Bytes = p.Length
	if err != nil {
		return rep, err
	}
	return rep, p.compared(cmp, want, endsAt)
}

// compareRange settles p.Length, the bytes both ends hold, and returns
// the range asked for and where one end stops short of the other (-1
// when neither does).
func (p *Plan) compareRange() (want, endsAt int64, err error) {
	o := &p.opts
	srcAvail, dstAvail := p.src.geo.Size-o.SrcOffset, p.dst.geo.Size-o.DstOffset
	switch {
	case srcAvail < 0:
		return 0, -1, refuse(KindBadInput, o.Src, fmt.Sprintf("Options.SrcOffset %d is past the end (size %d)", o.SrcOffset, p.src.geo.Size))
	case dstAvail < 0:
		return 0, -1, refuse(KindBadInput, o.Dst, fmt.Sprintf("Options.DstOffset %d is past the end (size %d)", o.DstOffset, p.dst.geo.Size))
	case o.LengthSet && (o.Length > srcAvail || o.SrcOffset+o.Length < 0):
		return 0, -1, refuse(KindBadInput, o.Src, fmt.Sprintf("range %d+%d runs past the end (size %d)", o.SrcOffset, o.Length, p.src.geo.Size))
	}
	want = srcAvail
	if o.LengthSet {
		want = o.Length
	}
	p.Length = min(want, dstAvail)
	whole := !o.LengthSet && o.SrcOffset == 0 && o.DstOffset == 0 && !p.dst.fixedSize
	if want > dstAvail || (whole && dstAvail > want) {
		return want, p.Length, nil
	}
	return want, -1, nil
}

// compared turns a compare's findings into nil or a *MismatchError. When
// one end is shorter, every block from where it ends to the end of the
// longer one differs.
func (p *Plan) compared(c *comparer, want, endsAt int64) error {
	o := &p.opts
	longer, detail := want, ""
	if endsAt >= 0 {
		dstHas := p.dst.geo.Size - o.DstOffset
		longer = max(want, dstHas)
		detail = fmt.Sprintf("SRC's range holds %d bytes, DST %d", want, dstHas)
		if c.first < 0 {
			c.first = endsAt
		}
		for i := endsAt / CellSize; i < cells(longer); i++ {
			c.bad.mark(i)
		}
	}
	if c.first < 0 {
		return nil
	}
	return &MismatchError{Path: p.dst.path, Offset: o.DstOffset + c.first, RangeOff: c.first, BadBlocks: c.bad.count,
		Blocks: cells(longer), Src: p.src.path, SrcOffset: o.SrcOffset + c.first, Detail: detail}
}
