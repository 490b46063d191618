package copier

import (
	"fmt"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
)

// srcEnd is a SRC that moves its own bytes and is only ever read: an
// HTTP(S) or S3 object (end_web_linux.go), a stream (end_stream_linux.go),
// and either of them or a local file decompressed (end_unpack_linux.go).
// The kinds fill in how it is reached; what a SRC of this sort is to the
// rest of copier is here. It is never DST: the kinds refuse that when
// they inspect.
//
// It says it has no holes: every byte is read, and zero blocks are not
// written (the zero detection of Options.Sparse), so that a sparse image
// stays sparse on DST.
type srcEnd struct {
	ep    *endpoint
	ident identity
	// seq: read in order only (engine.IOInfo.Sequential); resuming then
	// reads again from the start and skips what was copied.
	seq bool
	// resumable: a resume state can tell this SRC again (a URL's ETag);
	// false for standard input and pipes. unresumable, when set, says
	// why not where "read once" does not (a URL without validators).
	resumable   bool
	unresumable string
	// describe is a line for -v about what was found.
	describe string
	// take gives a run the end to read: the one inspect opened (a stream
	// is read once), or a new one.
	take func(p *Plan, rep *Report) (*srcIO, error)
	// release closes what inspect opened, when no run took it.
	release func() error
	// watch, when not nil, records the file read as it is now
	// (srcKind.watch).
	watch func() (*srcFile, error)
}

// srcIO is a srcEnd as a run holds it.
type srcIO struct {
	io engine.IOEnd
	// done, when not nil, is called once the copy read its whole range:
	// it reads what is left of a compressed stream (its trailer and
	// checks) and compares Options.ExpectChecksum's digest.
	done func() error
	// stream is the sequential end, which knows how much it read; nil for
	// an object.
	stream *seqIO
	// in counts the bytes read from the transport (a compressed SRC's
	// compressed bytes) for progress; nil when that is what the engine
	// reads.
	in func() int64
	// cause is the first error the end met, which the engine's error
	// reports as an errno only.
	cause func() error
	close func()
	// interrupt is the transport's (rawSource.stop), or nil.
	interrupt func()
}

var _ end = (*srcEnd)(nil)

// srcGeometry is what the block size choice needs of a SRC that moves its
// own bytes: its size, no alignment, and requests of optimal bytes.
func srcGeometry(name string, size int64, optimal int) align.Geometry {
	return align.Geometry{Path: name, Size: size, MemAlign: 1, OffsetAlign: 1, OptimalIO: optimal}
}

// srcFacts are the facts of every srcEnd: its own I/O, no holes it can
// tell.
func srcFacts(what string) endFacts {
	return endFacts{what: what, ownIO: true}
}

// refuseAsDst is the refusal of a kind that is only ever SRC.
func refuseAsDst(operand, what string) error {
	return refuse(KindNotSupported, operand, fmt.Sprintf("%s can only be read: DST is a file, a block device or an NBD export", what)).on("Dst")
}

// checkAlone notes what was found.
func (s *srcEnd) checkAlone(p *Plan) error {
	if s.describe != "" {
		p.note("%s: %s", s.ep.path, s.describe)
	}
	return nil
}

// check refuses a resumed copy from a SRC that cannot be known again, and
// settles what a SRC of unknown size asks of the copy.
func (s *srcEnd) check(p *Plan) error {
	o := &p.opts
	if o.Resume && !s.resumable {
		if s.unresumable != "" {
			return refuse(KindNotSupported, s.ep.path, fmt.Sprintf("Options.Resume cannot resume from SRC (%s): %s", s.ep.what, s.unresumable)).on("Resume")
		}
		return refuseResume(s.ep)
	}
	if r := p.resume; r != nil && r.from > 0 && s.seq {
		if o.Verify {
			// The verification compares the part an earlier run copied
			// with SRC read again beside DST: a stream is read once.
			return refuse(KindNotSupported, s.ep.path, fmt.Sprintf("Options.Verify cannot check a resumed copy from SRC (%s): it is read in order, once, and the part an earlier run copied would have to be read again beside DST", s.ep.what)).on("Verify")
		}
		p.note("resume: %s is read in order: the bytes before the resume point are read again and skipped", s.ep.path)
	}
	return p.checkOpenEnded()
}

func (s *srcEnd) same(*endpoint) (bool, string)                    { return false, "" }
func (s *srcEnd) overlap(byteRange, *endpoint, byteRange) *overlap { return nil }
func (s *srcEnd) directObstacle(*Plan, int64) string               { return "" }
func (s *srcEnd) uringObstacle(string) string                      { return "" }
func (s *srcEnd) space(*Plan) (dstSpace, bool)                     { return dstSpace{}, false }
func (s *srcEnd) identity() (identity, error)                      { return s.ident, nil }
func (s *srcEnd) lock(*Plan, *held, *Report) error                 { return nil }

// srcData: all of the range is data; it is not read to count zero
// blocks (that would fetch it twice). A SRC of unknown size has no data
// known before the copy.
func (s *srcEnd) srcData(p *Plan) (srcData, error) {
	if s.ep.openEnded {
		return srcData{how: " (SRC's size is not known before its end)"}, nil
	}
	o := &p.opts
	return srcData{ext: dataRange(o.SrcOffset, p.Length)}, nil
}

// open hands the end to a run.
func (s *srcEnd) open(p *Plan, rep *Report) (*held, error) {
	var w *srcFile
	if s.watch != nil {
		// Before the run's first read, as a raw file SRC's (fileEnd.open).
		var err error
		if w, err = s.watch(); err != nil {
			return nil, refuseErr(KindCheckFailed, s.ep.path, "cannot tell what it is", err).on("Src")
		}
	}
	x, err := s.take(p, rep)
	if err != nil {
		w.close()
		return nil, err
	}
	p.meter.watch(x)
	// The run owns what inspect opened now, and closes it after.
	release := s.release
	s.release = nil
	return &held{io: x.io, align: 1, done: x.done, stream: x.stream, cause: x.cause, interrupt: x.interrupt, unchanged: unchangedAll(w), release: func() {
		x.close()
		w.close()
		if release != nil {
			release()
		}
	}}, nil
}

func (s *srcEnd) openDst(*Plan, *Report) (target, error) {
	return nil, refuseAsDst(s.ep.path, s.ep.what)
}

func (s *srcEnd) close() error {
	if s.release == nil {
		return nil
	}
	err := s.release()
	s.release = nil
	return err
}

// watch has m's Statuses count what x read from its transport (BytesIn),
// and no further than where a stream of unknown size ended.
func (m *meter) watch(x *srcIO) {
	if m != nil {
		m.src.Store(x)
	}
}

// fromSrc adds what the watched SRC says to s.
func (m *meter) fromSrc(s *Status) {
	x := m.src.Load()
	if x == nil {
		return
	}
	if x.in != nil {
		s.BytesIn = x.in()
	}
	if x.stream != nil && x.stream.openEnded {
		pos := x.stream.pos.Load()
		s.BytesDone, s.BytesRead = min(s.BytesDone, pos), min(s.BytesRead, pos)
		s.BytesHoles = max(0, s.BytesDone-s.BytesData-s.BytesZeroed)
	}
}

// refuseResume refuses to resume from a SRC read once.
func refuseResume(ep *endpoint) error {
	return refuse(KindNotSupported, ep.path, fmt.Sprintf("Options.Resume cannot resume from SRC (%s): it is read once, and nothing tells whether another run would read the same bytes", ep.what)).on("Resume")
}
