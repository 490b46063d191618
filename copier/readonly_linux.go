package copier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
)

// Compare and Checksum read existing files or devices through the engine
// and write nothing: `ringcp verify` and `ringcp checksum`. They choose
// direct I/O, block size, queue depth and the backend as a copy does,
// with both ends opened read-only.

// prepareRead checks the ends and decides how to read them; checkRange
// settles the range. With no Dst, the one end plays both parts for the
// choices.
func prepareRead(o ReadOptions, checkRange func(p *Plan) error) (*Plan, error) {
	dst := o.Dst
	if dst == "" {
		dst = o.Src
	}
	for _, f := range []struct{ field, format string }{{"SrcFormat", o.SrcFormat}, {"DstFormat", o.DstFormat}} {
		if f.format != "" && f.format != FormatAuto && f.format != FormatRaw && f.format != FormatQcow2 {
			return nil, refuse(KindBadInput, "", fmt.Sprintf("ReadOptions.%s %q: auto, raw or qcow2", f.field, f.format)).on(f.field)
		}
	}
	p := &Plan{readOnly: true, opts: Options{Src: o.Src, Dst: dst, SrcOffset: o.SrcOffset, DstOffset: o.DstOffset, Length: o.Length,
		LengthSet: o.LengthSet, BlockSize: o.BlockSize, QueueDepth: o.QueueDepth, Engine: o.Engine, Direct: o.Direct, Progress: o.Progress,
		SrcFormat: o.SrcFormat}, readDstFormat: o.DstFormat}
	if err := p.opts.normalize(); err != nil {
		return nil, err
	}
	if err := p.prepareRead(o.Dst == "", checkRange); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// prepareRead is prepareRead's steps; one end is inspected once.
func (p *Plan) prepareRead(one bool, checkRange func(p *Plan) error) error {
	var err error
	if p.src, err = p.inspect(p.opts.Src, roleSrc); err != nil {
		return err
	}
	p.dst = p.src // a checksum's: one end, inspected once
	if p.src.openEnded {
		// A copy reads past a stream's end as zeros and cuts DST there; a
		// read pass would checksum or compare all of openEndCap.
		return refuse(KindBadInput, p.src.path, "a stream's size is not known before it ends, and a read pass needs it: give Options.Length").on("Length")
	}
	steps := []func() error{func() error { return p.src.checkAlone(p) }}
	if !one {
		if p.dst, err = p.inspect(p.opts.Dst, roleDst); err != nil {
			return err
		}
		steps = append(steps, func() error { return p.dst.checkAlone(p) })
	}
	steps = append(steps, func() error { return checkRange(p) }, p.chooseDirect, p.findReadLimits, p.chooseSizes, p.chooseEngine)
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// readRun holds what a read pass needs: the open ends and the buffers.
type readRun struct {
	src, dst *held
	bufs     *align.Buffers
}

func (p *Plan) startRead(both bool) (*readRun, error) {
	r := &readRun{}
	var err error
	if r.src, err = p.src.open(p, &Report{}); err != nil {
		return r, err
	}
	if both {
		if r.dst, err = p.dst.open(p, &Report{}); err != nil {
			return r, err
		}
	}
	if r.bufs, err = align.AllocBuffers(p.QueueDepth, p.BlockSize); err != nil {
		return r, fmt.Errorf("cannot map %d buffers of %d bytes: %w", p.QueueDepth, p.BlockSize, err)
	}
	return r, nil
}

// explain adds to a read pass's error the cause the end that failed gave
// (an image's cluster that does not decompress), as explainSrc does to a
// copy's: the end the engine's failed request names. A stop, or an
// error that is no end's read, stays as it is.
func (r *readRun) explain(err error) error {
	var op *engine.OpError
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &op) {
		return err
	}
	for _, h := range []*held{r.src, r.dst} {
		if h == nil || h.cause == nil || h.name() != op.Path {
			continue
		}
		c := h.cause()
		if c == nil || errors.Is(err, c) || interruption(c) {
			continue
		}
		return &srcError{err: err, cause: c}
	}
	return err
}

func (r *readRun) close() {
	if r.bufs != nil {
		r.bufs.Free()
	}
	r.src.close()
	r.dst.close()
}

func (p *Plan) readReport(st engine.Stats, start time.Time) ReadReport {
	return ReadReport{Src: p.src.path, Dst: p.dst.path, SrcOffset: p.opts.SrcOffset, DstOffset: p.opts.DstOffset, Engine: st.Backend, FallbackReason: p.FallbackReason,
		BytesRead: st.BytesRead, Seconds: time.Since(start).Seconds(), BlockSize: p.BlockSize, QueueDepth: p.QueueDepth,
		DirectSrc: p.src.direct, DirectDst: p.dst.direct, Request: p.passFit.request, IOLimits: p.IOLimits, Notes: p.Notes}
}

// Checksum computes the block checksum o.Sum makes (the oVirt imageio
// checksum, ImageioChecksum, when o.Sum is nil) of o.Src's range: data is read through the
// engine; a file's holes are neither read nor given as data.
func Checksum(ctx context.Context, o ReadOptions) (ReadReport, error) {
	o.Dst, o.DstOffset = "", 0
	if o.Sum == nil {
		o.Sum = ImageioChecksum
	}
	p, err := prepareRead(o, (*Plan).checkRange)
	if err != nil {
		return ReadReport{}, err
	}
	defer p.Close() // an end not taken by the pass
	r, err := p.startRead(false)
	defer r.close()
	if err != nil {
		return ReadReport{}, refuseErr(KindResources, "", "nothing was read, the checksum could not start", err)
	}
	start := time.Now()
	h := sumObserver{o.Sum(p.Length)}
	defer h.s.Close()
	job := p.passJob(r.bufs.Slots, p.Length, func(rel int64, src, _ []byte) error {
		h.Data(rel, src)
		p.opts.Progress.Verified.Add(int64(len(src)))
		return nil
	})
	r.src.into(&job, engine.FileSrc)
	job.SrcOff, job.SrcAlign = p.opts.SrcOffset, r.src.align
	job.MapHoles, job.Observer = p.src.mapsHoles, holesOnly{checkedHoles{h, p.opts.Progress}}
	meter := startReadProgress(o, p.opts.Progress, job.Progress, p.Length)
	st, err := p.readPass(ctx, job)
	err = r.explain(err)
	rep := p.readReport(st, start)
	rep.Dst, rep.DirectDst, rep.Bytes = "", false, p.Length
	if err != nil {
		meter.end(false)
		return rep, err
	}
	if err := r.unchanged("the checksum"); err != nil {
		meter.end(false)
		return rep, err
	}
	sum, err := h.s.Sum()
	meter.end(err == nil)
	rep.Checksum = &sum
	return rep, err
}

// checkedHoles counts the holes a checksum does not read as checked, so
// that its progress reaches the range's end.
type checkedHoles struct {
	sumObserver
	progress *engine.Progress
}

func (o checkedHoles) Hole(rel, n int64) {
	o.sumObserver.Hole(rel, n)
	o.progress.Verified.Add(n)
}
