package copier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
)

// Report is what a copy did.
type Report struct {
	Src, Dst       string
	Engine         string // "io_uring" or "pool"
	FallbackReason string
	Bytes          int64 // bytes written to DST as data
	BytesRead      int64
	BytesHoles     int64  // not written: holes, or zeros left as holes
	BytesZeroed    int64  // made zero on DST (fallocate or writes of zeros)
	Offload        string // "reflink" or "copy_file_range" when the filesystem copied
	// OffloadFallback says why an offload that was tried gave way to the
	// engine.
	OffloadFallback string
	Seconds         float64
	CPUSeconds      float64 // user+system of this process, io_uring workers included
	BlockSize       int
	QueueDepth      int
	DirectSrc       bool
	DirectDst       bool
	Synced          bool
	Caps            engine.Caps
	// Contiguous is how many bytes from the start of the copy reached DST
	// without a gap; DstState says what DST holds (after a failure too).
	Contiguous int64
	DstState   DstState
	// MaxRate is the rate cap when the copy ended (Plan.SetMaxRate may
	// have changed Options.MaxRate meanwhile), in bytes per second; 0
	// for none.
	MaxRate int64
	// IOPrio is the I/O priority the reads and writes had, "" for the
	// kernel's default; IOLimits the cgroup limits the copy was fitted to.
	IOPrio   string
	IOLimits []IOLimit
	// Yield is what the yield controller did (Options.Yield), nil when
	// it did not run.
	Yield *YieldReport
	// Notes are what Run decided or met that Plan.Notes could not say
	// yet: how a new DST was created, why an offload gave way, a side
	// that stayed buffered.
	Notes []string
}

// Rate is the rate the cap governs, in bytes per second: the bytes read
// (each is written once) over the copy's time. 0 when no time passed.
func (r *Report) Rate() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.BytesRead) / r.Seconds
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Copy is Prepare followed by Run.
func Copy(ctx context.Context, opts Options) (Report, error) {
	p, err := Prepare(opts)
	if err != nil {
		return Report{}, err
	}
	return p.Run(ctx)
}

// Run performs the planned copy. It first acquires everything the copy
// needs (descriptors, buffers, the engine's backend); a failure there is a
// *RefusedError and DST is as it was. Only then is DST cut and written.
// Run does not change the Plan: what it learns goes into the Report.
func (p *Plan) Run(ctx context.Context) (Report, error) {
	rep := Report{Src: p.opts.Src, Dst: p.opts.Dst, BlockSize: p.BlockSize, QueueDepth: p.QueueDepth,
		DirectSrc: p.src.direct, DirectDst: p.dst.direct, FallbackReason: p.FallbackReason,
		IOPrio: p.IOPrio, IOLimits: p.IOLimits}
	a, err := p.acquire(&rep)
	if err != nil {
		return rep, err
	}
	defer a.release()
	start, cpu0 := time.Now(), cpuTime()
	y := p.startYield()
	st, err := p.move(ctx, a, &rep)
	if rep.Yield = y.stop(); rep.Yield != nil {
		rep.note("%s", rep.Yield)
	}
	a.undrained = errors.Is(err, engine.ErrUndrained)
	rep.Seconds, rep.CPUSeconds = time.Since(start).Seconds(), cpuTime()-cpu0
	rep.MaxRate = p.gov.capNow()
	rep.Engine, rep.Caps = st.Backend, st.Caps
	if rep.Offload != "" {
		rep.Engine = rep.Offload
	}
	rep.Bytes, rep.BytesRead, rep.Synced = st.BytesWritten, st.BytesRead, st.Synced
	rep.BytesHoles, rep.BytesZeroed = st.BytesHoles, st.BytesZeroed
	rep.Contiguous = st.Contiguous
	if err == nil {
		err = a.dst.publish(p, !p.opts.NoSync)
	}
	if a.undrained {
		// Requests the backend could not reap may still write DST: it is
		// neither cut back nor discarded, and nothing is freed (release).
		rep.DstState = DstChanging
		return rep, err
	}
	if err != nil {
		return rep, p.stopped(&rep, a.dst, err)
	}
	rep.DstState = DstComplete
	return rep, nil
}

// move cuts DST if the plan says so, lets the filesystem copy where the
// plan allows it, and has the engine copy otherwise. Both end with the
// engine's size and barrier.
func (p *Plan) move(ctx context.Context, a *acquired, rep *Report) (engine.Stats, error) {
	if err := a.dst.cut(p); err != nil {
		return engine.Stats{}, err
	}
	if p.offloadMode != OffloadNever {
		n, handled, err := p.offload(ctx, a.files[engine.FileSrc], a.dst.f)
		if handled {
			rep.Offload = map[OffloadMode]string{OffloadReflink: "reflink", OffloadCopyRange: "copy_file_range"}[p.offloadMode]
			return a.copy.Finish(n, err)
		}
		rep.OffloadFallback = err.Error()
		rep.note("offload failed, the engine copies: %v", err)
	}
	return a.copy.Run(ctx)
}

// acquired is everything a copy holds while it runs.
type acquired struct {
	files engine.Files
	locks heldLocks
	dst   *dest
	bufs  *align.Buffers
	copy  *engine.Copy
	// undrained: the engine's backend failed with requests in flight that
	// it could not reap (engine.ErrUndrained). The kernel may still read
	// into the buffers and write through the descriptors, so both are
	// leaked on purpose: freed, the next mapping at the same address could
	// be overwritten, and DST could change after its file was closed. The
	// locks stay too, for the life of the process.
	undrained bool
}

// acquire opens both ends, maps the buffers and sets the engine up, in
// that order, without changing DST. Whatever fails is a refusal; what was
// acquired is released again, and a new DST's temporary file removed.
func (p *Plan) acquire(rep *Report) (*acquired, error) {
	a := &acquired{}
	err := p.acquireAll(a, rep)
	if err == nil {
		return a, nil
	}
	if a.dst != nil {
		a.dst.discard()
	}
	a.release()
	var refused *RefusedError
	if !errors.As(err, &refused) {
		err = refuseErr("", "nothing was written, the copy could not start", err)
	}
	return nil, err
}

func (p *Plan) acquireAll(a *acquired, rep *Report) error {
	var err error
	if a.files[engine.FileSrc], err = p.openSource(); err != nil {
		return err
	}
	if a.locks, err = p.lockEnds(a.files[engine.FileSrc], rep); err != nil {
		return err
	}
	if a.dst, err = p.openDest(); err != nil {
		return err
	}
	a.files[engine.FileDst] = a.dst.f
	if a.dst.fresh != newNone {
		rep.note("new DST is %s", a.dst.fresh)
	}
	if p.dst.direct && !a.dst.direct {
		rep.DirectDst = false
		rep.note("DST %s: buffered: its filesystem refused O_DIRECT on the new file", p.dst.path)
	}
	if a.bufs, err = align.AllocBuffers(p.QueueDepth, p.BlockSize); err != nil {
		return fmt.Errorf("cannot map %d buffers of %d bytes: %w (a smaller block size or queue depth needs less)", p.QueueDepth, p.BlockSize, errors.Unwrap(err))
	}
	job := p.job(a.files, a.bufs.Slots, a.dst.direct)
	job.Budget = engine.NewBudget(a.bufs.Slots)
	p.gov.attach(job.Budget)
	a.copy, err = p.openEngine(job, rep)
	return err
}

// release closes what acquire got, last first.
func (a *acquired) release() {
	if a.undrained {
		return
	}
	if a.copy != nil {
		a.copy.Close()
	}
	if a.bufs != nil {
		a.bufs.Free()
	}
	closeAll(a.files)
	a.locks.release()
}

func (p *Plan) job(files engine.Files, bufs [][]byte, dstDirect bool) engine.Job {
	dstAlign := 1
	if dstDirect {
		dstAlign = p.dst.alignment()
	}
	job := engine.Job{
		Files: files, SrcOff: p.opts.SrcOffset, DstOff: p.opts.DstOffset, Length: p.Length,
		BlockSize: p.BlockSize, Buffers: bufs,
		SrcAlign: p.src.alignment(), DstAlign: dstAlign,
		Sync: !p.opts.NoSync, Progress: p.opts.Progress, Sparse: p.sparse,
		Rate: p.gov.lim,
	}
	job.IOPrio, _ = engine.ParseIOPrio(p.IOPrio)
	// Under a cgroup I/O limit every request is charged once only if it
	// is never tried without blocking first (engine.Job.Blocking).
	job.Blocking = len(p.IOLimits) > 0
	if p.dst.isBlock {
		return job
	}
	end := p.opts.DstOffset + p.Length
	// A file this copy owns (new, or cut) gets exactly the range's end
	// as its size and is cut back if the copy stops; a file that holds
	// other data only grows, and keeps what lies outside the range.
	owned := p.truncate || !p.dst.exists
	job.CutBackOnStop = owned
	if owned || end > p.dst.geo.Size {
		job.FinalSize = end
	}
	job.Preallocate = true
	return job
}

// openSource opens SRC read-only and checks it is what Prepare inspected.
func (p *Plan) openSource() (*os.File, error) {
	f, err := openAs(p.src.path, p.src.path, os.O_RDONLY|unix.O_NONBLOCK|directFlag(p.src.direct), 0)
	if err != nil {
		return nil, err
	}
	if err := checkOpened(f, &p.src); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func closeAll(files engine.Files) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
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
