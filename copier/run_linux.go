package copier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/fallback"
	"github.com/ringcp/ringcp/ring"
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
}

// Copy is Prepare followed by Run.
func Copy(ctx context.Context, opts Options) (Report, error) {
	p, err := Prepare(opts)
	if err != nil {
		return Report{}, err
	}
	return p.Run(ctx)
}

// Run performs the planned copy.
func (p *Plan) Run(ctx context.Context) (Report, error) {
	rep := Report{Src: p.opts.Src, Dst: p.opts.Dst, BlockSize: p.BlockSize, QueueDepth: p.QueueDepth,
		DirectSrc: p.src.direct, DirectDst: p.dst.direct, FallbackReason: p.FallbackReason}
	files, d, err := p.open()
	if err != nil {
		return rep, err
	}
	// undrained: the engine's backend failed with requests still in flight
	// that it could not reap (engine.ErrUndrained). The kernel may still
	// read into the buffers and write through the descriptors, so both are
	// leaked on purpose: freed, the next mapping at the same address could
	// be overwritten, and DST could change after its file was closed.
	undrained := false
	defer func() {
		if !undrained {
			closeAll(files)
		}
	}()
	if p.offload != OffloadNever {
		if done, err := p.runOffload(ctx, files, d, &rep); done {
			if err != nil {
				return rep, p.stopped(&rep, d, err)
			}
			rep.DstState = DstComplete
			return rep, nil
		}
	}
	bufs, err := align.AllocBuffers(p.QueueDepth, p.BlockSize)
	if err != nil {
		return rep, p.stopped(&rep, d, fmt.Errorf("buffers of %d x %d bytes: %w", p.QueueDepth, p.BlockSize, err))
	}
	defer func() {
		if !undrained {
			bufs.Free()
		}
	}()
	job := p.job(files, bufs.Slots)
	start, cpu0 := time.Now(), cpuTime()
	st, err := engine.Run(ctx, job, p.newBackend(&rep))
	undrained = errors.Is(err, engine.ErrUndrained)
	rep.Seconds, rep.CPUSeconds = time.Since(start).Seconds(), cpuTime()-cpu0
	rep.Engine, rep.Caps = st.Backend, st.Caps
	rep.Bytes, rep.BytesRead, rep.Synced = st.BytesWritten, st.BytesRead, st.Synced
	rep.BytesHoles, rep.BytesZeroed = st.BytesHoles, st.BytesZeroed
	rep.Contiguous = st.Contiguous
	if err == nil {
		err = d.publish(p.dst.path, !p.opts.NoSync)
	}
	if err != nil {
		return rep, p.stopped(&rep, d, err)
	}
	rep.DstState = DstComplete
	return rep, nil
}

// runOffload tries the filesystem's copy. done is true when it copied (or
// failed past the point of falling back); otherwise the engine runs.
func (p *Plan) runOffload(ctx context.Context, files engine.Files, d *dest, rep *Report) (bool, error) {
	start, cpu0 := time.Now(), cpuTime()
	ok, err := p.tryOffload(ctx, files)
	if ctx.Err() != nil {
		return true, &engine.CanceledError{Err: ctx.Err()}
	}
	if !ok {
		rep.OffloadFallback = err.Error()
		p.note("offload failed, the engine copies: %v", err)
		return false, nil
	}
	rep.Engine = map[OffloadMode]string{OffloadReflink: "reflink", OffloadCopyRange: "copy_file_range"}[p.offload]
	rep.Offload, rep.Bytes, rep.BytesRead = rep.Engine, p.Length, p.Length
	err = p.finishOffload(d, rep)
	rep.Seconds, rep.CPUSeconds = time.Since(start).Seconds(), cpuTime()-cpu0
	return true, err
}

func (p *Plan) job(files engine.Files, bufs [][]byte) engine.Job {
	job := engine.Job{
		Files: files, SrcOff: p.opts.SrcOffset, DstOff: p.opts.DstOffset, Length: p.Length,
		BlockSize: p.BlockSize, Buffers: bufs,
		SrcAlign: p.src.alignment(), DstAlign: p.dst.alignment(),
		Sync: !p.opts.NoSync, Progress: p.opts.Progress, Sparse: p.sparse,
	}
	if p.dst.isBlock {
		return job
	}
	end := p.opts.DstOffset + p.Length
	// A file this copy owns (new, or truncated) gets exactly the range's
	// size and is cut back if the copy stops; a file that holds other data
	// only grows, and keeps what lies outside the range.
	owned := p.truncate || !p.dst.exists
	job.CutBackOnStop = owned
	if owned || end > p.dst.geo.Size {
		job.FinalSize = end
	}
	job.Preallocate = true
	return job
}

// newBackend returns the backend the plan chose. In auto mode io_uring can
// still vanish between Prepare and Run (a sysctl flipped): then the pool
// takes over, and the report says why.
func (p *Plan) newBackend(rep *Report) engine.NewBackend {
	if p.Backend == EnginePool {
		return fallback.New
	}
	if p.opts.Engine == EngineUring {
		return engine.NewUring
	}
	return func(s engine.Setup) (engine.Backend, error) {
		b, err := engine.NewUring(s)
		if errors.Is(err, ring.ErrUnavailable) {
			rep.FallbackReason = err.Error()
			return fallback.New(s)
		}
		return b, err
	}
}

// open opens SRC read-only and DST for writing, now that nothing is left to
// refuse. SRC is checked to be what Prepare inspected.
func (p *Plan) open() (engine.Files, *dest, error) {
	var files engine.Files
	var err error
	if files[engine.FileSrc], err = openChecked(&p.src, os.O_RDONLY|directFlag(p.src.direct)); err != nil {
		return files, nil, err
	}
	d, err := p.openDest()
	if err != nil {
		closeAll(files)
		return files, nil, err
	}
	files[engine.FileDst], files[engine.FileDstTail] = d.f, d.tail
	return files, d, nil
}

func openChecked(ep *endpoint, flag int) (*os.File, error) {
	f, err := os.OpenFile(ep.path, flag|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := checkSame(f, ep); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkSame guards against the path being swapped between Prepare and Run.
func checkSame(f *os.File, ep *endpoint) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Dev != ep.st.Dev || st.Ino != ep.st.Ino {
		// Refused: nothing was written, the other file is left alone.
		return refuse(ep.path, "changed between checking and opening it (renamed or replaced meanwhile)")
	}
	return nil
}

func directFlag(on bool) int {
	if on {
		return unix.O_DIRECT
	}
	return 0
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
