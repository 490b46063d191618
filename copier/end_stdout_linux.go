package copier

import (
	"fmt"
	"io"
	"os"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
)

// "-" as DST: standard output (the stream kind's operand, which
// inspectStdin hands here for DST). Its bytes go out once, in order,
// from the range's start: the pool's workers hand their writes to an
// orderedWriter, whose one goroutine writes them to the stream in order
// (end_stdout_io_linux.go). SRC's holes and zero blocks are written as
// zeros (notZeroed): a stream has no holes. DST has no offset (dd's seek=
// is refused: a pipe cannot seek), no size, no read-back, and a copy to
// it is never resumed. Standard output that is a terminal is refused:
// binary data there garbles the screen, and the report would mix with it.
// A file or device behind `>` is written the same way, in order, and
// synced at the end.

// stdoutEnd is standard output as DST.
type stdoutEnd struct {
	ep *endpoint
	w  io.Writer // Options.Stream.Stdout, else os.Stdout
}

var _ end = (*stdoutEnd)(nil)

// inspectStdout looks at "-" as DST.
func inspectStdout(p *Plan, operand string) (*endpoint, error) {
	ep := &endpoint{path: operand, role: roleDst, exists: true}
	s := &stdoutEnd{ep: ep, w: p.opts.Stream.Stdout}
	ep.end = s
	ep.endFacts = endFacts{what: "standard output", ownIO: true, sizeless: true, stream: true, notZeroed: true}
	ep.geo = align.Geometry{Path: operand, MemAlign: 1, OffsetAlign: 1}
	if s.w == nil {
		s.w = os.Stdout
	}
	f, ok := s.w.(*os.File)
	if !ok {
		return ep, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return ep, refuseErr(KindCheckFailed, operand, "cannot look at standard output", err).on("Dst")
	}
	if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
		return ep, refuse(KindBadInput, operand, "standard output is a terminal: ringcp does not write a copy's bytes there (redirect it to a file or a pipe)").on("Dst")
	}
	return ep, nil
}

// checkAlone: nothing to check before the range is known.
func (s *stdoutEnd) checkAlone(*Plan) error { return nil }

// check refuses what a stream written once cannot do: an offset, a
// read-back, a resume state, a sync.
func (s *stdoutEnd) check(p *Plan) error {
	o := &p.opts
	no := func(field, what string) error {
		return refuse(KindNotSupported, s.ep.path, fmt.Sprintf("%s: standard output is written once, in order, and cannot be read back", what)).on(field)
	}
	switch {
	case o.DstOffset != 0:
		return no("DstOffset", fmt.Sprintf("Options.DstOffset %d", o.DstOffset))
	case o.Verify:
		return no("Verify", "Options.Verify")
	case o.Resume:
		return no("Resume", "Options.Resume")
	case o.Sync || o.restricted():
		return no("Sync", "a copy of what changed")
	case o.DstFormat != "" && o.DstFormat != FormatRaw:
		return no("DstFormat", "Options.DstFormat "+o.DstFormat)
	}
	p.note("%s: standard output, written in order; SRC's holes and zeros are written as zeros", s.ep.path)
	return nil
}

func (s *stdoutEnd) same(*endpoint) (bool, string)                    { return false, "" }
func (s *stdoutEnd) overlap(byteRange, *endpoint, byteRange) *overlap { return nil }
func (s *stdoutEnd) directObstacle(*Plan, int64) string               { return "" }
func (s *stdoutEnd) uringObstacle(string) string                      { return "" }
func (s *stdoutEnd) space(*Plan) (dstSpace, bool)                     { return dstSpace{}, false }
func (s *stdoutEnd) lock(*Plan, *held, *Report) error                 { return nil }
func (s *stdoutEnd) close() error                                     { return nil }
func (s *stdoutEnd) srcData(*Plan) (srcData, error)                   { return srcData{}, nil }

func (s *stdoutEnd) identity() (identity, error) {
	return identity{Path: s.ep.path, Kind: "stdout"}, nil
}

func (s *stdoutEnd) open(*Plan, *Report) (*held, error) {
	return nil, refuse(KindNotSupported, s.ep.path, "standard output cannot be read").on("Src")
}

// openDst starts the writer of the stream.
func (s *stdoutEnd) openDst(p *Plan, _ *Report) (target, error) {
	w := newOrderedWriter("stdout", s.w, p.opts.DstOffset)
	return &stdoutTarget{w: w, h: &held{io: w, align: 1, release: w.close}}, nil
}

// stdoutTarget is standard output as Run holds it.
type stdoutTarget struct {
	w      *orderedWriter
	h      *held
	keepIt bool
}

var _ target = (*stdoutTarget)(nil)

func (t *stdoutTarget) held() *held                      { return t.h }
func (t *stdoutTarget) cut(*Plan) error                  { return nil }
func (t *stdoutTarget) publish(*Plan, bool) error        { return nil }
func (t *stdoutTarget) discard() bool                    { return false }
func (t *stdoutTarget) keep(on bool)                     { t.keepIt = on }
func (t *stdoutTarget) kept() bool                       { return t.keepIt }
func (t *stdoutTarget) release()                         { t.h.close() }
func (t *stdoutTarget) identity(*Plan) (identity, error) { return identity{Kind: "stdout"}, nil }
func (t *stdoutTarget) stop()                            { t.w.stop() }

// endAt: an open-ended SRC ended; everything was written in order by
// the barrier (Flush) already.
func (t *stdoutTarget) endAt(int64) error { return nil }

// shape: nothing to size or reserve on a stream, and no zero blocks to
// find: they are written all the same.
func (t *stdoutTarget) shape(_ *Plan, job *engine.Job) {
	job.FinalSize, job.Preallocate, job.CutBackOnStop = 0, false, false
	job.ZeroBlock = 0
}

// endsWith has the writer drop what lies past where a SRC of unknown
// size ended (s), read from SRC's offset srcOff.
func (t *stdoutTarget) endsWith(s *seqIO, srcOff int64) {
	t.w.bound = func() (int64, bool) {
		if !s.ended.Load() {
			return 0, false
		}
		return s.pos.Load() - srcOff, true
	}
}

// left: the reader has what was written out, in order: exactly a prefix.
func (t *stdoutTarget) left(_ *Plan, rep *Report) DstState {
	rep.Contiguous = t.w.out()
	return DstPrefix
}

func (t *stdoutTarget) readBack(*Plan) (string, error) {
	return "", fmt.Errorf("standard output cannot be read back")
}
