package unpack

import (
	"bufio"
	"hash"
	"io"
)

// xzBlockStream decodes a block in place from the shared input, for a
// block too large to hold or whose sizes its header does not give. At
// its end it checks its sizes, padding and check, and leaves the input
// just after the block.
type xzBlockStream struct {
	in      *bufio.Reader
	h       *xzBlockHeader
	count   countReader // the compressed bytes the decoder took
	lz      *lzma2Reader
	sum     hash.Hash
	check   int
	out     int64
	rec     *xzRecord // set at the end, for the index
	initErr error
}

func newXzBlockStream(in *bufio.Reader, h *xzBlockHeader, checkID byte, rec *xzRecord) *xzBlockStream {
	s := &xzBlockStream{in: in, h: h, check: xzCheckSizes[checkID], rec: rec}
	if newSum, _ := newCheck(checkID); newSum != nil {
		s.sum = newSum()
	}
	var src io.Reader = in
	if h.compressed >= 0 {
		src = io.LimitReader(in, h.compressed)
	}
	s.count.r = src
	dict, err := h.dictSize()
	if err != nil {
		s.initErr = err
	}
	s.lz = newLZMA2Reader(&s.count, dict)
	return s
}

func (s *xzBlockStream) Read(p []byte) (int, error) {
	if s.initErr != nil {
		return 0, s.initErr
	}
	n, err := s.lz.Read(p)
	if s.sum != nil {
		s.sum.Write(p[:n])
	}
	s.out += int64(n)
	if s.h.uncompressed >= 0 && s.out > s.h.uncompressed {
		return n, corrupt("xz block longer than its header says")
	}
	if err == io.EOF {
		return n, s.finish()
	}
	// The source's own failure or the decoder's: Reader.failure tells
	// them apart.
	return n, err
}

// finish checks the block once its data ended and reads its tail.
func (s *xzBlockStream) finish() error {
	if s.h.compressed >= 0 && s.count.n != s.h.compressed {
		return corrupt("xz block data is %d bytes, its header says %d", s.count.n, s.h.compressed)
	}
	if s.h.uncompressed >= 0 && s.out != s.h.uncompressed {
		return corrupt("xz block gave %d bytes, its header says %d", s.out, s.h.uncompressed)
	}
	tail := make([]byte, s.h.tail(s.count.n, s.check))
	if _, err := io.ReadFull(s.in, tail); err != nil {
		return unexpected(err)
	}
	if err := checkTail(tail, padding4(s.h.size+s.count.n), s.sum); err != nil {
		return err
	}
	*s.rec = s.h.record(s.count.n, s.out, s.check)
	return io.EOF
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
