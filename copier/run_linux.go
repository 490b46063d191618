package copier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
	"golang.org/x/time/rate"
)

// Run performs the planned copy. It first acquires everything the copy
// needs (descriptors, buffers, the engine's backend); a failure there is a
// *RefusedError and DST is as it was. Only then is DST cut and written.
// Run does not change the Plan: what it learns goes into the Report.
// While it runs, Status may be called from other goroutines, and
// Options.OnProgress is called every Options.ProgressInterval and once
// more at the end, before Run returns.
func (p *Plan) Run(ctx context.Context) (Report, error) {
	if p.meter == nil {
		return p.run(ctx)
	}
	end := p.meter.begin(&p.opts)
	rep, err := p.run(ctx)
	end(err == nil)
	return rep, err
}

// run is Run without the progress reports.
func (p *Plan) run(ctx context.Context) (Report, error) {
	rep := p.newReport()
	a, err := p.acquire(ctx, &rep, nil)
	if err != nil {
		return rep, err
	}
	defer a.release()
	return p.runAcquired(ctx, a, rep)
}

func (p *Plan) newReport() Report {
	return Report{Src: shown(p.opts.Src), Dst: p.opts.Dst, SrcOffset: p.opts.SrcOffset, DstOffset: p.opts.DstOffset, Length: p.Length, BlockSize: p.BlockSize, QueueDepth: p.QueueDepth,
		DirectSrc: p.src.direct, DirectDst: p.dst.direct, FallbackReason: p.FallbackReason,
		IOPrio: p.IOPrio, IOLimits: p.IOLimits}
}

// runAcquired is Run once everything is acquired: it cuts and writes DST.
func (p *Plan) runAcquired(ctx context.Context, a *acquired, rep Report) (Report, error) {
	start, cpu0 := time.Now(), cpuTime()
	srcStop := stopSrcWith(ctx, a.src)
	a.srcStop = srcStop
	defer srcStop.end()
	if s, ok := a.dst.(stopper); ok {
		defer context.AfterFunc(ctx, s.stop)()
	}
	y := p.startYield()
	st, err := p.move(ctx, a, &rep)
	err = srcStop.explain(ctx, st, explainDst(a, explainSrc(a, err, srcStop)))
	if rep.Yield = y.stop(); rep.Yield != nil {
		rep.note("%s", rep.Yield)
	}
	if rep.Neighbour = p.gov.neighbourReport(); rep.Neighbour != nil && rep.Neighbour.Samples > 0 {
		rep.note("%s", rep.Neighbour)
	}
	a.undrained = errors.Is(err, engine.ErrUndrained)
	rep.Seconds, rep.CPUSeconds = time.Since(start).Seconds(), cpuTime()-cpu0
	rep.MaxRate = p.gov.capNow()
	rep.Engine, rep.FixedBuffers, rep.EngineDetail = st.Backend, st.Caps.FixedBuffers, st.Caps.Detail
	if rep.Offload != "" {
		rep.Engine = rep.Offload
	}
	rep.Bytes, rep.BytesRead, rep.Synced = st.BytesWritten, st.BytesRead, st.Synced
	rep.BytesHoles, rep.BytesZeroed = st.BytesHoles, st.BytesZeroed
	rep.Contiguous = st.Contiguous
	p.syncReport(&rep, st)
	if a.trust != nil {
		rep.Resumed, rep.Contiguous = a.trust.from, a.trust.from+st.Contiguous
	}
	if err == nil {
		err = srcStop.explain(ctx, st, p.finishSrc(a, &rep))
	}
	if err == nil {
		err = p.finishTrust(ctx, a, &rep)
	}
	if err == nil {
		// Last of all SRC's reads (the verification's and a resumed
		// checksum's included), first of DST's naming.
		err = p.srcUnchanged(a, &rep)
	}
	if err == nil {
		err = a.dst.publish(p, !p.opts.NoSync)
	}
	p.endTrust(a, &rep, err)
	if a.undrained {
		// Requests the backend could not reap may still write DST: it is
		// not cut back, and nothing is freed (release). A new DST never
		// got its name: its temporary name goes, and what the requests
		// still write lands in an inode nobody can reach.
		rep.DstState = DstChanging
		if a.dst.discard() {
			rep.DstState = DstDiscarded
		}
		return rep, err
	}
	var refused *RefusedError
	if errors.As(err, &refused) || a.cutFailed {
		// Refused in Run before DST was changed (spaceShort), or its first
		// change, the cut, failed: nothing to keep of a new DST, nothing
		// changed in an existing one.
		a.dst.discard()
		rep.DstState = DstUntouched
		return rep, err
	}
	if err != nil {
		rep.DstState = p.changedUnder(a, &rep, p.trustOutcome(a.dst.left(p, &rep), a.dst, err), err)
		return rep, err
	}
	rep.DstState = DstComplete
	return rep, nil
}

// streamBound is a target written in order (standard output) that must
// not take the zeros the engine reads past the end of a SRC of unknown
// size before it knows where that is (end_src_size_linux.go): a file is
// cut there afterwards, a stream cannot be.
type streamBound interface{ endsWith(s *seqIO, srcOff int64) }

// stopper is a target whose writes may wait on someone else (standard
// output's reader): stopped, they return at once, so that a signal ends
// the copy even when the reader does not read.
type stopper interface{ stop() }

// move lets the filesystem share SRC's extents where the plan says so,
// cuts DST, lets the filesystem copy where it can, and has the engine
// copy otherwise. All end with the engine's size and barrier. A reflink is
// tried before the cut: refused, it changed nothing, and a refusal for
// too little room (spaceShort) can still leave DST untouched.
func (p *Plan) move(ctx context.Context, a *acquired, rep *Report) (engine.Stats, error) {
	p.voidState(rep)
	if p.offloadMode == OffloadReflink {
		if st, done, err := p.tryOffload(ctx, a, rep); done {
			return st, err
		}
		if p.spaceShort != nil {
			return engine.Stats{}, p.spaceShort
		}
	}
	if err := a.dst.cut(p); err != nil {
		a.cutFailed = true
		return engine.Stats{}, err
	}
	if p.offloadMode == OffloadCopyRange {
		if st, done, err := p.tryOffload(ctx, a, rep); done {
			return st, err
		}
	}
	return a.copy.Run(ctx)
}

// tryOffload runs the planned offload; done is false, with nothing moved,
// when the filesystem cannot do it here, and the engine is to copy.
func (p *Plan) tryOffload(ctx context.Context, a *acquired, rep *Report) (st engine.Stats, done bool, err error) {
	n, handled, err := p.offload(ctx, a.src.f, a.dst.held().f)
	if handled {
		rep.Offload = map[OffloadMode]string{OffloadReflink: "reflink", OffloadCopyRange: "copy_file_range"}[p.offloadMode]
		st, err := a.copy.Finish(n, err)
		return st, true, err
	}
	rep.OffloadFallback = err.Error()
	rep.note("offload failed, the engine copies: %v", err)
	return engine.Stats{}, false, nil
}

// acquired is everything a copy holds while it runs.
type acquired struct {
	src  *held // its descriptor holds SRC's locks
	dst  target
	bufs *align.Buffers
	// shared is the batch's budget, which a batch job's read passes
	// (verification, a resumed checksum) take their buffers from, and
	// sharedRate its cap; nil for a single copy, whose passes reuse bufs.
	shared     *engine.Budget
	sharedRate *rate.Limiter
	copy       *engine.Copy
	srcStop    *srcStopper // while the copy runs: interrupts SRC's reads
	trust      *trustRun   // verification, checksum, resume state (trustrun_linux.go)
	// undrained: the engine's backend failed with requests in flight that
	// it could not reap (engine.ErrUndrained). The kernel may still read
	// into the buffers and write through the descriptors, so both are
	// leaked on purpose: freed, the next mapping at the same address could
	// be overwritten, and DST could change after its file was closed. The
	// locks stay too, for the life of the process.
	undrained bool
	// cutFailed: cutting DST, the first change, failed: DST is as it was.
	cutFailed bool
}

// acquire opens both ends, maps the buffers and sets the engine up, in
// that order, without changing DST. Whatever fails is a refusal; what was
// acquired is released again, and a new DST's temporary file removed.
// With s (a batch), the buffers and the rate cap are the batch's.
func (p *Plan) acquire(ctx context.Context, rep *Report, s *shared) (*acquired, error) {
	a := &acquired{}
	err := p.acquireAll(ctx, a, rep, s)
	if err == nil {
		return a, nil
	}
	if a.dst != nil {
		a.dst.discard()
	}
	a.release()
	var refused *RefusedError
	if !errors.As(err, &refused) {
		err = refuseErr(acquireKind(err), "", "nothing was written, the copy could not start", err)
	}
	return nil, err
}

func (p *Plan) acquireAll(ctx context.Context, a *acquired, rep *Report, s *shared) error {
	var err error
	if a.src, err = p.src.open(p, rep); err != nil {
		return err
	}
	if err = p.src.lock(p, a.src, rep); err != nil {
		return err
	}
	if a.dst, err = p.dst.openDst(p, rep); err != nil {
		return err
	}
	if b, ok := a.dst.(streamBound); ok && p.src.openEnded && a.src.stream != nil {
		b.endsWith(a.src.stream, p.opts.SrcOffset)
	}
	job := p.job(a)
	if err := a.buffers(p, &job, s); err != nil {
		return err
	}
	if err := p.proveDone(ctx, a, rep); err != nil {
		return err
	}
	a.trust = p.newTrust(&job)
	p.observeExpect(a, &job)
	if a.copy, err = p.openEngine(job, rep); err != nil {
		return err
	}
	return a.trust.begin(p, a.dst)
}

// buffers gives the job its slots: a batch's shared ones (s), or its own.
func (a *acquired) buffers(p *Plan, job *engine.Job, s *shared) error {
	if s != nil {
		s.join(p, job)
		a.shared, a.sharedRate = s.budget, s.rate
		return nil
	}
	var err error
	if a.bufs, err = align.AllocBuffers(p.QueueDepth, p.BlockSize); err != nil {
		return fmt.Errorf("cannot map %d buffers of %d bytes: %w (a smaller block size or queue depth needs less)", p.QueueDepth, p.BlockSize, errors.Unwrap(err))
	}
	job.Buffers = a.bufs.Slots
	job.Budget = engine.NewBudget(a.bufs.Slots)
	p.gov.attach(job.Budget)
	return nil
}

// passJob is a read pass over n bytes on the copy's buffers: its own, as
// many as the pass's fit allows, or a batch job's shared budget. It runs
// under the copy's caps: its reads are the copy's I/O too, and the
// governor (which SetMaxRate changes) sizes its window.
func (a *acquired) passJob(p *Plan, n int64, check engine.CheckFunc) engine.Job {
	var job engine.Job
	if a.shared != nil {
		job = p.passJob(nil, n, check)
		job.Budget, job.SharedRate = a.shared, a.sharedRate
	} else {
		bufs := a.bufs.Slots
		if d := p.passFit.depth; d > 0 && d < len(bufs) {
			bufs = bufs[:d]
		}
		job = p.passJob(bufs, n, check)
		job.Budget = engine.NewBudget(bufs)
		p.gov.attach(job.Budget)
	}
	job.Rate = p.gov.lim
	return job
}

// release closes what acquire got, last first.
func (a *acquired) release() {
	if a.undrained {
		return
	}
	a.trust.close()
	if a.copy != nil {
		a.copy.Close()
	}
	if a.bufs != nil {
		a.bufs.Free()
	}
	a.src.close()
	if a.dst != nil {
		a.dst.release()
	}
}

// job is the copy as the engine runs it, on the ends a holds.
func (p *Plan) job(a *acquired) engine.Job {
	job := engine.Job{
		SrcOff: p.opts.SrcOffset, DstOff: p.opts.DstOffset, Length: p.Length,
		BlockSize: p.BlockSize, SrcAlign: a.src.align, DstAlign: a.dst.held().align,
		Sync: !p.opts.NoSync, Progress: p.opts.Progress, Sparse: p.sparse,
		Rate: p.gov.lim,
	}
	// The copy's first failure interrupts SRC's reads in flight:
	// srcStop is Run's (set before the engine runs; nil in a pass that
	// has none).
	job.OnFail = func(err error) { a.srcStop.abandon(err) }
	a.src.into(&job, engine.FileSrc)
	a.dst.held().into(&job, engine.FileDst)
	job.IOPrio, _ = engine.ParseIOPrio(p.IOPrio)
	// Under a cgroup I/O limit every request is charged once only if it
	// is never tried without blocking first (engine.Job.Blocking).
	job.Blocking = len(p.IOLimits) > 0
	a.dst.shape(p, &job)
	p.openEndJob(&job)
	p.changedJob(&job)
	return job
}

// cpuTime is this process's user+system time in seconds; io_uring's io-wq
// workers are threads of the process and count too.
func cpuTime() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return tv(ru.Utime) + tv(ru.Stime)
}

func tv(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
