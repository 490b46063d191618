package copier

import (
	"errors"
	"fmt"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/units"
)

// Plan is a checked copy, ready to Run. Its fields say what was decided and
// why, for `ringcp -v` and for callers that log.
type Plan struct {
	opts     Options
	src, dst *endpoint
	// readOnly: a plan of Compare or Checksum, whose ends are both read.
	readOnly   bool
	Length     int64 // bytes to copy
	BlockSize  int
	QueueDepth int
	// spaceShort is the refusal for too little room, kept for Run when a
	// reflink (which needs none) is planned: Run gives it if the reflink
	// does not happen, before DST is cut.
	spaceShort error
	Backend    EngineChoice // the backend Run will use (a registered name, never auto)
	backend    engine.BackendInfo
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
	// ownWrites, when not "", says how the copy's own writes (or a batch
	// neighbour's) reach a file it reads, in other bytes: its marks then
	// change with them, and cannot tell another writer's
	// (srcchanged_linux.go).
	ownWrites string
	// ownThrough are the block devices those writes pass through
	// (guard.Through), whose counts of sectors written they move.
	ownThrough []uint64
	// IOPrio is the I/O priority the copy's reads and writes will have
	// ("idle", "be:4"...), "" for the kernel's default.
	IOPrio string
	gov    *governor // the rate cap and the depth while the copy runs
	// sizing is what BlockSize and QueueDepth were decided from
	// (sizes.go).
	sizing sizing
	// changed: Options.OnlyChanged's ranges or sync (changed_linux.go).
	changed changedPlan

	// readDstFormat is ReadOptions.DstFormat: what a read pass's second
	// end is read as ("" or FormatAuto: by its first bytes).
	readDstFormat string
}

// Close releases what a Plan holds open between Prepare and Run: the
// connections to its NBD ends. Run takes them over and closes them when
// it returns, so Close is for a plan that is not run; it is safe to call
// in any case, and more than once.
func (p *Plan) Close() error {
	var errs []error
	for _, ep := range []*endpoint{p.src, p.dst} {
		if ep != nil && ep.end != nil {
			errs = append(errs, ep.close())
		}
	}
	return errors.Join(errs...)
}

// forced records one more thing Options.Force overrode, for the line the
// command prints and for callers that log.
func (p *Plan) forced(why string) {
	p.addForced(why)
	p.note("Options.Force: writing %s although %s", p.opts.Dst, why)
}

// addForced appends why to Plan.Forced, "; " apart, keeping what other
// checks recorded before.
func (p *Plan) addForced(why string) {
	if p.Forced != "" {
		p.Forced += "; "
	}
	p.Forced += why
}

// SizeKnown says whether Length is the range's length. It is not for a
// SRC that does not say its size before its end (a pipe, standard
// input, gzip, zstd or bzip2 data, a server that sends no length, without
// Options.SrcSize or Options.Length): that copy runs until SRC ends, and
// Length is only a bound (16 TiB).
func (p *Plan) SizeKnown() bool { return p.src == nil || !p.src.openEnded }

// srcRange is what the copy reads of SRC; dstRange what it may change of
// DST: with truncation, all of it from DstOffset on (cut there, then
// sized).
func (p *Plan) srcRange() byteRange {
	return byteRange{off: p.opts.SrcOffset, end: p.opts.SrcOffset + p.Length}
}

func (p *Plan) dstRange() byteRange {
	r := byteRange{off: p.opts.DstOffset, end: p.opts.DstOffset + p.Length}
	if p.truncate {
		r.end = -1
	}
	return r
}

func (p *Plan) note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

// checkRange fixes the length and refuses a range past SRC's end.
func (p *Plan) checkRange() error {
	size, o := p.src.geo.Size, &p.opts
	if o.SrcSize > 0 && o.SrcSize != size && !p.src.openEnded {
		return refuse(KindBadInput, o.Src, fmt.Sprintf("SRC is %d bytes, Options.SrcSize says %d", size, o.SrcSize)).on("SrcSize")
	}
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
	p.truncate = !p.dst.fixedSize && p.cutsDst()
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

// oneObject says a and b are one object, and what, asking both ends'
// kinds: a kind answers for the ends of other kinds it may be (an export
// whose server on this host holds a local file open), not the reverse.
func oneObject(a, b *endpoint) (bool, string) {
	if same, what := a.same(b); same {
		return true, what
	}
	return b.same(a)
}

// checkSameObject refuses to copy a file or device onto itself where the
// ranges overlap, or where truncating DST would destroy SRC.
func (p *Plan) checkSameObject() error {
	same, what := oneObject(p.src, p.dst)
	if !same {
		return nil
	}
	o := &p.opts
	overlap := o.SrcOffset < o.DstOffset+p.Length && o.DstOffset < o.SrcOffset+p.Length
	if p.truncate || overlap || p.Length == 0 {
		return refuse(KindOverlap, o.Dst, fmt.Sprintf("SRC and DST are %s and the ranges overlap", what)).on("Dst")
	}
	p.ownWrites = fmt.Sprintf("SRC and DST are %s", what)
	return nil
}

// checkDestSize refuses a DST of a fixed size (a device, an export)
// smaller than the range's end.
func (p *Plan) checkDestSize() error {
	if !p.dst.fixedSize {
		return nil
	}
	need := p.opts.DstOffset + p.Length
	if need > p.dst.geo.Size {
		r := refuse(KindTooSmall, p.opts.Dst, fmt.Sprintf("%s too small: %s (%d bytes), the copy needs %s (%d bytes)",
			p.dst.what, units.Format(p.dst.geo.Size), p.dst.geo.Size, units.Format(need), need)).on("Dst")
		r.Needed = need
		return r
	}
	return nil
}

// chooseSizes decides the block size and queue depth (sizes.go) from the
// ends' geometry, the options, and the limits findLimits found: the one
// place that writes them.
func (p *Plan) chooseSizes() error {
	o, in := &p.opts, &p.sizing
	in.src, in.dst = p.src.geo, p.dst.geo
	in.maxRequest = p.src.maxRequest
	if m := p.dst.maxRequest; m > 0 && (in.maxRequest == 0 || m < in.maxRequest) {
		in.maxRequest = m
	}
	in.askBlock, in.askDepth, in.roundAsked = o.BlockSize, o.QueueDepth, o.Direct == DirectAuto
	in.conns = p.src.conns
	in.seq = p.src.seq()
	in.cap, in.yield = o.MaxRate, o.Yield
	in.cells = p.readOnly || o.Verify || o.Checksum != nil
	in.passOnly = p.readOnly
	if in.cells && in.maxRequest > 0 && in.maxRequest < CellSize {
		return refuse(KindNotSupported, "", fmt.Sprintf("an end takes at most %d bytes in one request, less than the %d-byte blocks verification and checksums read whole", in.maxRequest, CellSize))
	}
	s := decideSizes(*in)
	p.BlockSize, p.QueueDepth, p.passFit = s.block, s.depth, s.pass
	p.Notes = append(p.Notes, s.why...)
	return nil
}

// unit is what a request of the plan stays a multiple of: both ends'
// O_DIRECT alignment.
func (p *Plan) unit() int {
	return int(align.LCM(int64(p.src.geo.DirectAlign()), int64(p.dst.geo.DirectAlign())))
}
