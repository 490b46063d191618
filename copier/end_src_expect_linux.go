package copier

import (
	"errors"
	"fmt"
	"io"

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
// SRC as published: a range that is not all of it (raw: no offset, to
// its end), or a resumed copy of a raw object, whose bytes before the
// resume point are not read again.
func (p *Plan) checkExpect(whole bool) error {
	o := &p.opts
	if o.ExpectChecksum == "" {
		return nil
	}
	if !whole {
		return refuse(KindBadInput, o.Src, "Options.ExpectChecksum is the digest of all of SRC: it cannot be checked on a copy of part of it (Options.SrcOffset, Options.Length)").on("ExpectChecksum")
	}
	return nil
}

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

// expectStream hashes a SRC read in order, under the decompressor.
type expectStream struct {
	r *expectsum.Reader
}

// verify reads what is left of the published bytes (a decompressor may
// stop before a trailer it does not need), then compares the digest.
func (x *expectStream) verify() error {
	if _, err := io.Copy(io.Discard, x.r); err != nil {
		return fmt.Errorf("reading the rest of SRC for its checksum: %w", err)
	}
	return x.r.Verify()
}
