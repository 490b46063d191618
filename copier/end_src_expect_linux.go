package copier

import (
	"errors"

	"github.com/ringcp/ringcp/engine"

	"github.com/ringcp/ringcp/expectsum"
)

// Options.ExpectChecksum: the digest of SRC's bytes as published, over
// what is read from the transport (the compressed bytes of a compressed
// SRC). A SRC read in order hashes them as they pass (expectsum.Reader,
// under the decompressor); one read in parallel ranges hands each range
// as it completes to an expectsum.InOrder (expectRanges). Either way the
// digest is compared once the copy has read everything, before DST is
// published: a mismatch fails the copy (the command's exit 3), and a new
// DST is discarded.

// checkExpect refuses what keeps the digest from covering every byte of
// SRC as published: a range that is not all of it, or a resumed copy of
// a SRC read at offsets, whose bytes before the resume point are not read
// again (a stream's are: it is read from its start).
func (p *Plan) checkExpect() error {
	o := &p.opts
	if o.ExpectChecksum == "" {
		return nil
	}
	if o.SrcOffset != 0 || o.LengthSet && !p.src.seq() && o.Length != p.src.geo.Size {
		return refuse(KindBadInput, o.Src, "Options.ExpectChecksum is the digest of all of SRC: it cannot be checked on a copy of part of it (Options.SrcOffset, Options.Length)").on("ExpectChecksum")
	}
	if r := p.resume; r != nil && r.from > 0 && !p.src.seq() {
		return refuse(KindNotSupported, o.Src, "Options.ExpectChecksum cannot be checked on a resumed copy: the bytes an earlier run copied are not read again (remove the resume state to copy it whole)").on("ExpectChecksum")
	}
	return nil
}

// seq says the end is read in order (a stream, a decompressor).
func (ep *endpoint) seq() bool {
	s, ok := ep.end.(*srcEnd)
	return ok && s.seq
}

// observeExpect checks Options.ExpectChecksum on a SRC the engine reads
// through a descriptor (a local file or device): the digest is made from
// what the copy reads, handed over by the job's observer, holes as zeros.
// A SRC that moves its own bytes hashes them itself (buildSrc).
func (p *Plan) observeExpect(a *acquired, job *engine.Job) {
	if p.opts.ExpectChecksum == "" || a.src.io != nil {
		return
	}
	e, _ := expectsum.Parse(p.opts.ExpectChecksum) // normalize checked it
	x := newExpectRanges(e, p.Length, p.QueueDepth, p.BlockSize)
	var obs engine.Observer = expectObserver{x}
	if job.Observer != nil {
		obs = bothObservers{job.Observer, obs}
	}
	job.Observer = obs
	a.src.done = x.verify
	release := a.src.release
	a.src.release = func() {
		x.abort()
		if release != nil {
			release()
		}
	}
}

// expectObserver hands a copy's reads to the digest.
type expectObserver struct{ x *expectRanges }

func (o expectObserver) Data(rel int64, data []byte) { o.x.add(rel, data) }
func (o expectObserver) Hole(rel, n int64)           { o.x.h.Zero(rel, n) }
func (o expectObserver) Durable(int64)               {}

// bothObservers tells two observers everything.
type bothObservers [2]engine.Observer

func (b bothObservers) Data(rel int64, data []byte) { b[0].Data(rel, data); b[1].Data(rel, data) }
func (b bothObservers) Hole(rel, n int64)           { b[0].Hole(rel, n); b[1].Hole(rel, n) }
func (b bothObservers) Durable(n int64)             { b[0].Durable(n); b[1].Durable(n) }

// expectRanges hashes the ranges of an object read in parallel, in order.
type expectRanges struct {
	h    *expectsum.InOrder
	size int64
}

// newExpectRanges checks the size bytes of an object read by a copy of
// depth requests of block bytes in flight: the window parks every range
// ahead of the digest, so no read waits for another.
func newExpectRanges(e expectsum.Expect, size int64, depth, block int) *expectRanges {
	return &expectRanges{h: expectsum.NewInOrder(e, int64(depth+1)*int64(block)), size: size}
}

func (x *expectRanges) add(off int64, p []byte) error {
	err := x.h.Write(off, p)
	if errors.Is(err, expectsum.ErrTwice) {
		return nil // a range read again (a retried request): hashed once already
	}
	return err
}

// verify compares the digest once every range was read.
func (x *expectRanges) verify() error { return x.h.Verify(x.size) }

// abort wakes any read that waits for the digest: the copy is over.
func (x *expectRanges) abort() { x.h.Abort(errors.New("the copy ended")) }
