package copier

import (
	"fmt"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/internal/units"
)

// A copy's block size (the most one request moves, the size of a buffer)
// and queue depth (how many buffers, so requests in flight) are decided in
// one place, decideSizes: a pure function of everything they depend on,
// which Prepare calls once (chooseSizes), Compare and Checksum with whole
// cells (prepareRead). Nothing else writes Plan.BlockSize or
// Plan.QueueDepth; a batch's shared buffers are sized from its jobs'
// sizes by batchSizes. What a running copy keeps in flight, within those
// buffers, is the budget's window, whose one author is its Controller,
// the governor (governor.go): the depth under a cap follows the latency
// measured, and requests are cut when the cap is lowered.

// sizing is everything a copy's block size and queue depth depend on.
type sizing struct {
	// src and dst are the ends' geometry: their O_DIRECT alignment and
	// whether they take O_DIRECT at all, their optimal request size, and
	// SRC's size (no more blocks than it has).
	src, dst align.Geometry
	// maxRequest is the most one request may move on either end (its
	// kind's limit, endFacts.maxRequest); 0 for none.
	maxRequest int
	// askBlock and askDepth are what the caller asked for
	// (Options.BlockSize, QueueDepth); 0 lets them be chosen.
	askBlock, askDepth int
	// conns is how many connections SRC is read over (endFacts.conns):
	// the depth when none was asked for, one request in flight per
	// connection; 0 for an end of another sort.
	conns int
	// roundAsked (Direct auto): an asked block size that is not a
	// multiple of the O_DIRECT alignment of the ends that take O_DIRECT
	// is rounded down to one, so that O_DIRECT stays on.
	roundAsked bool
	// cap is the rate cap in bytes per second (the copy's own, or, for a
	// job of a batch without one, the batch's); 0 for none.
	cap int64
	// limit is the least cgroup bytes-per-second limit the copy meets
	// (limitWhy says whose); iops the least requests-per-second one. 0
	// for none.
	limit    int64
	limitWhy string
	iops     int64
	// yield (Options.Yield): blocks of at most yieldBlock.
	yield bool
	// seq: SRC is read in order only, a stream (sizes_stream.go).
	seq bool
	// cells: whole CellSize cells per block, which verification, checksums
	// and read passes need.
	cells bool
	// reads are the cgroup read limits the read passes meet (a copy's
	// read-back and resumed checksum, Checksum and Compare): their
	// requests and depth are fitted to them (readfit.go).
	reads ioLimits
	// passOnly: the plan is a read pass itself (Checksum, Compare), whose
	// depth is the pass's.
	passOnly bool
}

// addLimit tightens the copy's own limits (limit, iops) to bps bytes and
// iops requests per second (0: none), set by why.
func (in *sizing) addLimit(bps, iops uint64, why string) {
	f := ioLimits{limit: in.limit, limitWhy: in.limitWhy, iops: in.iops}
	f.add(bps, iops, why)
	in.limit, in.limitWhy, in.iops = f.limit, f.limitWhy, f.iops
}

// sizes is what decideSizes decided, with one line per decision for -v.
type sizes struct {
	block, depth int
	// pass is how the read passes fit the cgroup read limits: the most
	// one read moves (engine.Job.MaxRequest), the slots out.
	pass readFit
	why  []string
}

func (s *sizes) note(format string, args ...any) { s.why = append(s.why, fmt.Sprintf(format, args...)) }

// decideSizes decides a copy's block size and queue depth from in:
//
//  1. an asked block size is rounded to the O_DIRECT alignment (Direct
//     auto: roundAsked);
//  2. align.Choose: the default block size rounded to both ends'
//     alignments and optimal I/O sizes, no larger than SRC, and the depth,
//     within align's bounds (an asked size or depth is kept), then no
//     larger than an end's kind takes in one request, asked or not;
//  3. the fit to the caps (fit): yield's small blocks, an eighth of a
//     second of a cgroup limit (the rate cap cuts the requests, not the
//     blocks: governor.go); the depth to what
//     the cgroup limits let through (a size or depth the caller asked
//     for is kept, with a note); under the cap the governor decides how
//     many of the buffers are out, from the latency it measures;
//  4. whole cells (in.cells), rounded up;
//  5. under the cap, no more buffers of the final block than share.go's
//     rule of the capped buffers lets (fitCapBuffers), and the read
//     passes' fit to the read limits (in.reads): a Checksum's or
//     Compare's depth is its pass's (in.passOnly).
func decideSizes(in sizing) sizes {
	var s sizes
	asked := in.askedBlock(&s)
	c := align.Choose(in.src, in.dst, asked, in.depthWanted())
	s.block, s.depth = c.BlockSize, c.QueueDepth
	s.why = append(s.why, c.Why...)
	s.sayConns(in)
	s.fitStream(in)
	s.keepTo(in)
	bufs := s.depth
	s.fit(in, asked > 0, in.askDepth > 0)
	if in.cells {
		if bs := align.RoundUp(int64(s.block), CellSize); bs != int64(s.block) {
			s.note("block size %d rounded up to %d: verification and checksums read whole 4 MiB blocks", s.block, bs)
			s.block = int(bs)
		}
	}
	bufs = s.fitCapBuffers(in, bufs, in.askDepth > 0)
	if in.cells {
		s.fitPasses(in, bufs)
	}
	return s
}

// fitCapBuffers keeps no more buffers under the cap than share.go's rule
// (capBuffers) lets, of the final block (whole cells included), unless
// the caller gave the depth; bufs, the buffers before the copy's own
// fit, which the read passes use, are held to it too. It returns bufs.
func (s *sizes) fitCapBuffers(in sizing, bufs int, givenQD bool) int {
	if in.cap <= 0 {
		return bufs
	}
	most := capBuffers(in.cap, int64(s.block), s.depth)
	switch {
	case most >= s.depth:
	case givenQD:
		s.note("queue depth %d (given) keeps more than a second of the %s/s cap in its buffers", s.depth, units.Format(in.cap))
	default:
		s.depth, bufs = most, min(bufs, capBuffers(in.cap, int64(s.block), bufs))
		s.note("queue depth %d: the buffers hold a second of the %s/s cap (%d at least), which a cap raised or lifted later moves in whole blocks", s.depth, units.Format(in.cap), capLeastBuffers)
	}
	s.note("in flight under the cap: as many of the %d blocks as the latency measured needs to keep it, and one more (2 at first)", s.depth)
	return bufs
}

// fitPasses fits the read passes to the read limits, over bufs buffers
// (the depth before the copy's own fit).
func (s *sizes) fitPasses(in sizing, bufs int) {
	s.pass = fitReads(in.reads, in.unit(), bufs)
	switch {
	case s.pass.note == "":
	case in.passOnly:
		s.note("%s; %s", s.pass.note, blockingWhy)
	default:
		s.note("read passes (read-back, checksum of a resumed part): %s", s.pass.note)
	}
	if in.passOnly && s.pass.depth > 0 {
		s.depth = s.pass.depth
	}
}

// askedBlock is the asked block size as the copy takes it: with
// roundAsked, one that is not a multiple of the ends' O_DIRECT alignment
// (theirs that take O_DIRECT) is rounded down to one, at least one
// alignment unit. Taken as it is, it would turn O_DIRECT off on that side
// (chooseDirect), and a buffered copy through the page cache costs many
// times the CPU (-b 4MB, 4,000,000 bytes, measured 50x): the request's
// size is a tuning knob, O_DIRECT is what the tool is for. Direct always
// refuses such a size (chooseDirect); never takes it as it is.
func (in sizing) askedBlock(s *sizes) int {
	if in.askBlock == 0 || !in.roundAsked {
		return in.askBlock
	}
	unit := int64(1)
	for _, g := range []align.Geometry{in.src, in.dst} {
		if g.DirectSupported {
			unit = align.LCM(unit, int64(g.DirectAlign()))
		}
	}
	bs := int64(in.askBlock)
	if align.IsAligned(bs, unit) {
		return in.askBlock
	}
	rounded := max(unit, align.RoundDown(bs, unit))
	s.note("block size %d (%s) rounded to %d (%s), a multiple of the O_DIRECT alignment %d: otherwise O_DIRECT would be off",
		bs, units.Format(bs), rounded, units.Format(rounded), unit)
	return int(rounded)
}

// keepTo cuts the block to the most an end's kind takes in one request.
func (s *sizes) keepTo(in sizing) {
	if in.maxRequest <= 0 || s.block <= in.maxRequest {
		return
	}
	bs := max(in.unit(), align.RoundDown(int64(in.maxRequest), in.unit()))
	s.note("block size %s: the most an end takes in one request is %s", units.Format(bs), units.Format(int64(in.maxRequest)))
	s.block = int(bs)
}

// unit is what a block stays a multiple of when it is fitted: both ends'
// O_DIRECT alignment.
func (in sizing) unit() int64 {
	return align.LCM(int64(in.src.DirectAlign()), int64(in.dst.DirectAlign()))
}

// fit shrinks the block size and depth to the limits (share.go says
// why these fractions), and says how the rate cap cuts the requests. A
// block size or depth the caller gave (givenBS, givenQD) is kept, with a
// note when it does not fit.
func (s *sizes) fit(in sizing, givenBS, givenQD bool) {
	unit := in.unit()
	bs, qd := int64(s.block), s.depth
	shrink := func(limit int64, why string) {
		limit = fitSize(limit, unit)
		switch {
		case bs <= limit:
		case givenBS:
			s.note("block size %s (given) is over %s: %s", units.Format(bs), units.Format(limit), why)
		default:
			bs = limit
			s.note("block size %s: %s", units.Format(bs), why)
		}
	}
	if in.yield {
		shrink(yieldBlock, "yield: a foreground read waits behind at most one block per slot")
	}
	if in.limit > 0 {
		shrink(in.limit/8, fmt.Sprintf("at most 1/8 of %s/s (%s), so the copy moves in steps of an eighth of a second", units.Format(in.limit), in.limitWhy))
	}
	if in.cap > 0 {
		bs = s.fitCap(in, bs, unit, givenBS)
	}
	depth, why := qd, ""
	if in.limit > 0 {
		depth, why = max(1, int(in.limit/bs)), "no more in flight than "+in.limitWhy+" lets through in a second"
	}
	if in.iops > 0 && int(in.iops) < depth {
		depth, why = max(1, int(in.iops)), fmt.Sprintf("no more in flight than %d requests, what the cgroup lets through in a second", in.iops)
	}
	switch {
	case depth >= qd:
	case givenQD:
		s.note("queue depth %d (given) keeps more in flight than %d: %s", qd, depth, why)
	default:
		qd = depth
		s.note("queue depth %d: %s", qd, why)
	}
	s.block, s.depth = int(bs), qd
}

// fitCap fits the block size bs to the rate cap, as share.go's rule of
// the capped buffers says: the cap cuts the requests (the governor), the
// blocks stay what a lifted cap moves. A given block size is kept, with
// a note when it is over a step.
func (s *sizes) fitCap(in sizing, bs, unit int64, givenBS bool) int64 {
	step := fitSize(in.cap/capSteps, unit)
	why := fmt.Sprintf("two are 50 ms of the %s/s cap, so the copy moves in small steps and never runs ahead of the cap", units.Format(in.cap))
	switch {
	case bs <= step:
	case givenBS:
		s.note("block size %s (given) is over %s: %s", units.Format(bs), units.Format(step), why)
	case step >= capBlock:
		bs = step
		s.note("block size %s: %s", units.Format(bs), why)
	default:
		bs = min(bs, fitSize(capBlock, unit))
		s.note("requests of at most %s while the cap holds: %s; blocks of %s, which a cap raised or lifted later moves whole", units.Format(step), why, units.Format(bs))
	}
	return bs
}

// batchJob is what a job of a batch tells the sizing of the shared
// buffers: its block size, its length, and the depth it asked for.
type batchJob struct {
	block    int
	length   int64
	askDepth int
}

// batchSizes sizes a batch's shared buffers: the buffers one copy of all
// its bytes would get. Blocks as large as the largest job's (every job's
// requests fit), as many as the queue depth asked for (align's default
// when none, held to share.go's rule of the capped buffers under capBPS,
// the most the jobs move together per second, 0 for no cap, but one for
// each of the together jobs that run at once: a job runs holding a
// buffer, and fewer would run fewer jobs than --parallel asked), no more
// than the jobs have blocks, and within align.MaxInFlightBytes unless
// one block is larger: the batch holds what one copy would, whatever the
// number of jobs.
func batchSizes(jobs []batchJob, capBPS int64, together int) (block, slots int) {
	want := 0
	for _, j := range jobs {
		block = max(block, j.block)
		want = max(want, j.askDepth)
	}
	if want == 0 {
		want = align.DefaultQueueDepth
		if capBPS > 0 {
			want = max(capBuffers(capBPS, int64(block), want), min(together, want))
		}
	}
	bs, blocks := int64(block), int64(0)
	for _, j := range jobs {
		blocks += j.length/bs + min(j.length%bs, 1)
	}
	n := min(int64(want), blocks, align.MaxInFlightBytes/bs, align.MaxQueueDepth)
	return block, int(max(n, 1))
}
