package copier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// PrepareEach checks o.Src and decides how to read it, as a copy
// reading it would, caps included. It reads nothing; every refusal is a
// *RefusedError.
func PrepareEach(o EachOptions) (*EachPlan, error) {
	o.Dst, o.DstOffset = "", 0
	p, err := prepareEach(o)
	if err != nil {
		return nil, err
	}
	if err := p.pinSrc(o.SrcFile); err != nil {
		p.Close()
		return nil, err
	}
	return &EachPlan{p: p, each: o.Each, read: o.ReadOptions}, nil
}

// Run reads the range through the engine and hands each chunk to Each;
// holes are read as zeros. It runs once.
func (e *EachPlan) Run(ctx context.Context) (ReadReport, error) {
	p := e.p
	r, err := p.startRead(false)
	defer r.close()
	if err != nil {
		return ReadReport{}, refuseErr(KindResources, "", "nothing was read, the read could not start", err)
	}
	start := time.Now()
	progress := p.opts.Progress
	job := p.passJob(r.bufs.Slots, p.Length, func(rel int64, src, _ []byte) error {
		if err := e.each(rel, src); err != nil {
			return err
		}
		progress.Verified.Add(int64(len(src)))
		return nil
	})
	r.src.into(&job, engine.FileSrc)
	job.SrcOff, job.SrcAlign = p.opts.SrcOffset, r.src.align
	job.Rate = p.gov.lim
	job.Budget = engine.NewBudget(r.bufs.Slots)
	p.gov.attach(job.Budget)
	job.IOPrio, _ = engine.ParseIOPrio(p.IOPrio)
	meter := startReadProgress(e.read, progress, job.Progress, p.Length)
	y := p.startYield()
	st, err := p.readPass(ctx, job)
	if err == nil {
		err = r.unchanged("what was read")
	}
	y.stop()
	meter.end(err == nil)
	rep := p.readReport(st, start)
	rep.Dst, rep.DirectDst, rep.Bytes = "", false, p.Length
	return rep, err
}

// Close releases what Prepare holds (an NBD connection).
func (e *EachPlan) Close() { e.p.Close() }

// Length is the bytes the read covers.
func (e *EachPlan) Length() int64 { return e.p.Length }

// SetMaxRate changes the rate cap while Run runs (0: none).
func (e *EachPlan) SetMaxRate(bytesPerSecond int64) { e.p.SetMaxRate(bytesPerSecond) }

// prepareEach checks the end and decides how to read it, as a copy
// reading it would, caps included.
func prepareEach(o EachOptions) (*Plan, error) {
	p := &Plan{readOnly: true, opts: Options{Src: o.Src, Dst: o.Src, SrcOffset: o.SrcOffset, Length: o.Length,
		LengthSet: o.LengthSet, BlockSize: o.BlockSize, QueueDepth: o.QueueDepth, Engine: o.Engine, Direct: o.Direct,
		Progress: o.Progress, MaxRate: o.MaxRate, IOPrio: o.IOPrio, Yield: o.Yield, SrcFormat: o.SrcFormat}}
	if err := p.opts.normalize(); err != nil {
		return nil, err
	}
	if err := p.prepareRead(true, (*Plan).checkRange); err != nil {
		p.Close()
		return nil, err
	}
	for _, step := range []func() error{p.chooseIOPrio, p.startGovernor} {
		if err := step(); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// pinSrc refuses a read whose SRC is not the file the caller opened and
// checked (EachOptions.SrcFile). Every descriptor the read opens later
// is checked to be the object inspected (fileEnd.checkSame); this checks
// that object is the caller's, which closes the gap between the
// caller's open and the inspection's, both by name.
func (p *Plan) pinSrc(f *os.File) error {
	if f == nil {
		return nil
	}
	fe, ok := p.src.end.(*fileEnd)
	if !ok {
		return refuse(KindBadInput, p.src.path, fmt.Sprintf("EachOptions.SrcFile is for a file or block device, not a %s", p.src.what)).on("SrcFile")
	}
	if err := fe.checkSame(f); err != nil {
		var r *RefusedError
		if errors.As(err, &r) {
			return r.on("Src")
		}
		return refuseErr(KindCheckFailed, p.src.path, "cannot tell whether SRC is the file that was checked", err).on("Src")
	}
	return nil
}
