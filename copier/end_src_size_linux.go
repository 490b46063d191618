package copier

import (
	"errors"
	"fmt"

	"github.com/ringcp/ringcp/engine"
)

// A SRC whose size is not known before it ends (endFacts.openEnded: a
// pipe, standard input, gzip, zstd or bzip2 data, a server that sends no
// length) is copied until it ends. The engine needs a length: it gets
// openEndCap, and SRC (a seqIO) says it is data in steps until the stream
// ends, then that nothing past its end is; the reads the engine sent past
// the end before it knew read as zeros, which the zero detection does not
// write. Once the engine is done, DST is cut where SRC ended and synced
// again (finishOpenEnded). So DST must be a file this copy creates or
// cuts, where nothing past the end is lost; a block device, an export or
// a range inside a file needs Options.Length to announce the size.

// openEndCap is the length a copy of unknown size is given: more than a
// stream will hold (16 TiB, ext4's largest file; a longer one fails the
// copy), few enough 1 GiB hole chunks for the engine past its end.
const openEndCap = 1 << 44

// checkOpenEnded refuses what a copy to an unknown end cannot do. A SRC
// whose size Options.SrcSize announces, or of which Options.Length copies
// a part, is no longer open-ended (buildSrc).
func (p *Plan) checkOpenEnded() error {
	o, ep := &p.opts, p.src
	if !ep.openEnded {
		return nil
	}
	need := func(why string) error { return refuseOpenEnded(p, ep, why) }
	switch {
	case p.dst.fixedSize:
		return need(fmt.Sprintf("DST is a %s, whose bytes past SRC's end must not be changed", p.dst.what))
	case p.dst.exists && !p.truncate && !p.dst.sizeless:
		return need("DST is an existing file the copy does not cut")
	case o.Verify || o.Checksum != nil:
		return need("verification and checksums need the length of the range")
	case o.Resume:
		return need("a resumable copy records its range")
	}
	p.note("%s: its size is not known before its end: DST is cut where it ends", ep.path)
	return nil
}

// refuseOpenEnded refuses a copy from a SRC of unknown size, and why.
func refuseOpenEnded(p *Plan, ep *endpoint, why string) error {
	return refuse(KindBadInput, p.opts.Src, fmt.Sprintf("SRC (%s) does not say its size before its end, and %s: announce it with Options.SrcSize", ep.what, why)).on("SrcSize")
}

// openEndJob makes the engine's job for a SRC of unknown size: asked
// where its data is (up to where it ends), DST sized afterwards, never
// reserved ahead.
func (p *Plan) openEndJob(job *engine.Job) {
	if !p.src.openEnded {
		return
	}
	job.MapHoles, job.DstZeroed = true, true
	job.FinalSize, job.Preallocate = 0, false
}

// ender is a target that ends where an open-ended SRC ended its own
// way (standard output, /dev/null: nothing to cut).
type ender interface{ endAt(size int64) error }

// finishOpenEnded cuts DST where SRC ended, makes that durable, and
// reports the length that was copied.
func (p *Plan) finishOpenEnded(a *acquired, rep *Report) error {
	if !p.src.openEnded {
		return nil
	}
	x := a.src.stream
	n := x.pos.Load() - p.opts.SrcOffset
	if !x.ended.Load() || n < 0 {
		return fmt.Errorf("%s: the copy ended before SRC did (at %d bytes)", p.src.path, x.pos.Load())
	}
	if err := p.endDst(a, p.opts.DstOffset+n); err != nil {
		return err
	}
	rep.Length, rep.Contiguous = n, n
	rep.Bytes, rep.BytesRead = min(rep.Bytes, n), min(rep.BytesRead, n)
	rep.BytesHoles = max(0, n-rep.Bytes-rep.BytesZeroed)
	return nil
}

// endDst cuts a file DST at size and syncs it, or has a target that
// ends its own way end there.
func (p *Plan) endDst(a *acquired, size int64) error {
	if e, ok := a.dst.(ender); ok {
		return e.endAt(size)
	}
	f := a.dst.held().f
	if err := f.Truncate(size); err != nil {
		return &engine.OpError{Op: "ftruncate", Path: p.dst.path, Offset: size, Err: err}
	}
	if !p.opts.NoSync {
		if err := f.Sync(); err != nil {
			return &engine.OpError{Op: "fdatasync", Path: p.dst.path, Offset: size, Err: err}
		}
	}
	return nil
}

// finishSrc is what a SRC that moves its own bytes checks once the engine
// read its range (held.done), and where a SRC of unknown size ended.
func (p *Plan) finishSrc(a *acquired, rep *Report) error {
	if rep.Offload != "" {
		return nil // never with a digest to check (needsData)
	}
	if a.src.done != nil {
		if err := a.src.done(); err != nil {
			return err
		}
	}
	return p.finishOpenEnded(a, rep)
}

// explainSrc adds to a copy's error the cause its SRC gave, when the
// engine's errno is all the error says. A request on another end that
// failed (DST full) is not explained by what SRC met while the engine
// drained (a damaged cluster read in flight).
func explainSrc(a *acquired, err error, stop *srcStopper) error {
	if err == nil || a.src == nil || a.src.cause == nil {
		return err
	}
	var op *engine.OpError
	if errors.As(err, &op) && op.Path != a.src.name() {
		return err
	}
	if c := a.src.cause(); c != nil && !errors.Is(err, c) && !stop.abandonedCause(c) {
		return &srcError{err: err, cause: c}
	}
	return err
}
