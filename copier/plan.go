package copier

import (
	"fmt"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/units"
)

// Plan is a checked copy, ready to Run. Its fields say what was decided and
// why, for `ringcp -v` and for callers that log.
type Plan struct {
	opts       Options
	src, dst   endpoint
	Length     int64 // bytes to copy
	BlockSize  int
	QueueDepth int
	// roomShort is the refusal for too little room, kept for Run when a
	// reflink (which needs none) is planned: Run gives it if the reflink
	// does not happen, before DST is cut.
	roomShort error
	Backend   EngineChoice // the backend Run will use (a registered name, never auto)
	backend   engine.BackendInfo
	// FallbackReason is why the pool is used although io_uring was wanted
	// (auto mode), or "".
	FallbackReason string
	truncate       bool // DST is a file to be cut to DstOffset+Length
	sparse         engine.Sparse
	offloadMode    OffloadMode // OffloadNever, OffloadReflink or OffloadCopyRange: what Run tries first
	Notes          []string
	Forced         string      // what Options.Force overrode (DST in use, a new file in /dev, too little room), or ""
	resume         *resumePlan // Options.Resume: the state file and where the copy starts
	meter          *meter      // the copy's progress (progress.go)
	// IOLimits are the cgroup I/O limits on the disks the copy reads and
	// writes; the block size and depth were fitted to them.
	IOLimits []IOLimit
	passFit  readFit // the read passes' fit to the cgroup read limits (readfit.go)
	// IOPrio is the I/O priority the copy's reads and writes will have
	// ("idle", "be:4"...), "" for the kernel's default.
	IOPrio string
	gov    *governor // the rate cap and the depth while the copy runs
}

// Prepare checks opts against both ends and decides how to copy. It writes
// nothing: every refusal is a *RefusedError.
func Prepare(opts Options) (*Plan, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	p := &Plan{opts: opts}
	if err := p.prepare(); err != nil {
		p.Close() // the connections to NBD ends
		return nil, err
	}
	p.meter = newMeter(p.opts.Progress, p.Length)
	return p, nil
}

func (p *Plan) prepare() error {
	var err error
	if p.src, err = p.inspectEnd(p.opts.Src, "Src", inspectSource); err != nil {
		return err
	}
	if p.dst, err = p.inspectEnd(p.opts.Dst, "Dst", func(string) (endpoint, error) { return p.inspectTarget() }); err != nil {
		return err
	}
	steps := []func() error{p.checkPseudoFS, p.checkEmptyDevice, p.checkRange, p.checkExports, p.checkResume, p.checkSameObject, p.checkInUse, p.checkLocks, p.checkDestSize,
		p.checkNewInDev, p.checkWritable, p.checkFileLimit, p.checkImageFormat,
		p.roundBlockSize, p.chooseDirect, p.chooseSizes, p.fitShare, p.chooseIOPrio, p.chooseSparse, p.chooseOffload, p.chooseTrust, p.startGovernor, p.checkRoom, p.chooseEngine}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func (p *Plan) note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

// checkRange fixes the length and refuses a range past SRC's end.
func (p *Plan) checkRange() error {
	size, o := p.src.geo.Size, &p.opts
	if o.SrcOffset > size {
		return refuse(KindBadInput, o.Src, fmt.Sprintf("Options.SrcOffset %d is past the end (size %d)", o.SrcOffset, size)).on("SrcOffset")
	}
	p.Length = size - o.SrcOffset
	if o.LengthSet {
		if o.SrcOffset+o.Length > size || o.SrcOffset+o.Length < 0 {
			return refuse(KindBadInput, o.Src, fmt.Sprintf("range %d+%d runs past the end (size %d)", o.SrcOffset, o.Length, size)).on("Length")
		}
		p.Length = o.Length
	}
	if o.DstOffset+p.Length < 0 {
		return refuse(KindBadInput, o.Dst, "Options.DstOffset plus length overflows").on("DstOffset")
	}
	p.truncate = !p.dst.fixedSize() && p.cutsDst()
	return nil
}

// cutsDst applies the size policy: a whole-file copy replaces DST, as cp
// does; a range lands inside DST and keeps the rest.
func (p *Plan) cutsDst() bool {
	o := &p.opts
	switch o.DstSize {
	case SizeTruncate:
		return true
	case SizeKeep:
		return false
	}
	return o.DstOffset == 0 && !o.LengthSet
}

// checkSameObject refuses to copy a file or device onto itself where the
// ranges overlap, or where truncating DST would destroy SRC.
func (p *Plan) checkSameObject() error {
	same, what := sameObjectWhy(&p.src, &p.dst)
	if !same {
		same, what = servedEnds(&p.src, &p.dst)
	}
	if !same {
		return nil
	}
	o := &p.opts
	overlap := o.SrcOffset < o.DstOffset+p.Length && o.DstOffset < o.SrcOffset+p.Length
	if p.truncate || overlap || p.Length == 0 {
		return refuse(KindOverlap, o.Dst, fmt.Sprintf("SRC and DST are %s and the ranges overlap", what)).on("Dst")
	}
	return nil
}

func (p *Plan) checkDestSize() error {
	if !p.dst.fixedSize() {
		return nil
	}
	need := p.opts.DstOffset + p.Length
	if need > p.dst.geo.Size {
		return refuse(KindTooSmall, p.opts.Dst, fmt.Sprintf("%s too small: %s (%d bytes), the copy needs %s (%d bytes)",
			p.dst.kind(), units.Format(p.dst.geo.Size), p.dst.geo.Size, units.Format(need), need)).on("Dst")
	}
	return nil
}

func (p *Plan) chooseSizes() error {
	c := align.Choose(p.src.geo, p.dst.geo, p.opts.BlockSize, p.opts.QueueDepth)
	p.BlockSize, p.QueueDepth = c.BlockSize, c.QueueDepth
	p.Notes = append(p.Notes, c.Why...)
	return nil
}
