package copier

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
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
	p := &Plan{opts: Options{Src: o.Src, Dst: dst, SrcOffset: o.SrcOffset, DstOffset: o.DstOffset, Length: o.Length,
		LengthSet: o.LengthSet, BlockSize: o.BlockSize, QueueDepth: o.QueueDepth, Engine: o.Engine, Direct: o.Direct, Progress: o.Progress}}
	if err := p.opts.normalize(); err != nil {
		return nil, err
	}
	if err := p.inspectRead(o.Src, dst); err != nil {
		p.Close()
		return nil, err
	}
	for _, step := range []func() error{p.checkPseudoFS, func() error { return checkRange(p) }, p.chooseDirect, p.chooseSizes, p.chooseEngine} {
		if err := step(); err != nil {
			p.Close()
			return nil, err
		}
	}
	// Whole cells per chunk, and halves of a block that O_DIRECT takes.
	p.BlockSize = int(align.RoundUp(int64(p.BlockSize), CellSize))
	p.fitReadLimits()
	return p, nil
}

// inspectRead looks at the ends: files, devices or NBD exports (read
// through the engine's NBD backend, as a copy reads them).
func (p *Plan) inspectRead(src, dst string) error {
	var err error
	if p.src, err = p.inspectEnd(src, "Src", inspectSource); err != nil {
		return err
	}
	p.dst = p.src // a checksum's: one end, inspected once
	if dst != src {
		if p.dst, err = p.inspectEnd(dst, "Dst", inspectSource); err != nil {
			return err
		}
	}
	return nil
}

// openRead opens an end read-only, checked to be what was inspected.
func openRead(ep *endpoint) (*os.File, error) {
	f, err := openAs(ep.path, ep.path, os.O_RDONLY|unix.O_NONBLOCK|directFlag(ep.direct), 0)
	if err != nil {
		return nil, err
	}
	if err := checkOpened(f, ep); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readRun holds what a read pass needs: the open ends and the buffers.
type readRun struct {
	files engine.Files
	ends  engine.Ends // the NBD exports among them
	bufs  *align.Buffers
}

func (p *Plan) startRead(both bool) (*readRun, error) {
	r := &readRun{}
	ends := []struct {
		ep *endpoint
		id engine.FileID
	}{{&p.src, engine.FileSrc}}
	if both {
		ends = append(ends, struct {
			ep *endpoint
			id engine.FileID
		}{&p.dst, engine.FileDst})
	}
	for _, e := range ends {
		if err := r.open(p, e.ep, e.id); err != nil {
			return r, err
		}
	}
	var err error
	if r.bufs, err = align.AllocBuffers(p.QueueDepth, p.BlockSize); err != nil {
		return r, fmt.Errorf("cannot map %d buffers of %d bytes: %w", p.QueueDepth, p.BlockSize, err)
	}
	return r, nil
}

// open opens an end to read: a file or device read-only, an export's
// connections (checked with a first read, as a copy's are).
func (r *readRun) open(p *Plan, ep *endpoint, id engine.FileID) error {
	if ep.export == nil {
		f, err := openRead(ep)
		r.files[id] = f
		return err
	}
	x, err := ep.export.take(p)
	if err != nil {
		return err
	}
	r.ends[id] = x
	return probe(x)
}

func (r *readRun) close() {
	if r.bufs != nil {
		r.bufs.Free()
	}
	closeAll(r.files)
	closeExports(r.ends)
}

// mapsHoles says whether a read pass asks SRC where its holes are: a
// file's, or an export's block status when the server has it.
func (ep *endpoint) mapsHoles() bool {
	if ep.export != nil {
		return ep.export.info.BlockStatus
	}
	return !ep.isBlock
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
	defer p.Close() // an export not taken by the pass
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
	job.Files[engine.FileSrc], job.SrcOff, job.SrcAlign = r.files[engine.FileSrc], p.opts.SrcOffset, p.src.alignment()
	job.Ends = r.ends
	job.MapHoles, job.Observer = p.src.mapsHoles(), holesOnly{checkedHoles{h, p.opts.Progress}}
	meter := startReadProgress(o, p.opts.Progress, job.Progress, p.Length)
	st, err := p.readPass(ctx, job)
	rep := p.readReport(st, start)
	rep.Dst, rep.DirectDst, rep.Bytes = "", false, p.Length
	if err != nil {
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
