package unpack

import (
	"bufio"
	"io"
)

// xzSplitter cuts an xz input into its blocks for the pipeline: blocks
// whose header gives both sizes, within maxUnit, are read whole and
// decoded by workers; others are decoded in place. Then it checks the
// index and footer of each stream, and the padding between streams.
type xzSplitter struct {
	in      *bufio.Reader
	maxUnit int64
}

func (x *xzSplitter) split(emit func(*unit) error) error {
	for first := true; ; first = false {
		if !first {
			more, err := x.skipPadding()
			if err != nil || !more {
				return err
			}
		}
		if err := x.stream(emit); err != nil {
			return err
		}
	}
}

// stream reads one stream: header, blocks, index, footer.
func (x *xzSplitter) stream(emit func(*unit) error) error {
	check, err := readXzHeader(x.in)
	if err != nil {
		return err
	}
	if _, err := newCheck(check); err != nil {
		return err
	}
	var records []*xzRecord
	for {
		next, err := x.in.Peek(1)
		if err != nil {
			return unexpected(err)
		}
		if next[0] == 0 {
			break // the index indicator
		}
		rec := &xzRecord{}
		records = append(records, rec)
		if err := x.block(check, rec, emit); err != nil {
			return err
		}
	}
	x.in.ReadByte()
	blocks := make([]xzRecord, len(records))
	for i, r := range records {
		blocks[i] = *r
	}
	size, err := readXzIndex(x.in, blocks)
	if err != nil {
		return err
	}
	return readXzFooter(x.in, check, size)
}

// block emits one block: whole to a worker, or in place.
func (x *xzSplitter) block(check byte, rec *xzRecord, emit func(*unit) error) error {
	h, err := readXzBlockHeader(x.in)
	if err != nil {
		return err
	}
	checkSize := xzCheckSizes[check]
	if h.compressed < 0 || h.uncompressed < 0 || h.compressed > x.maxUnit || h.uncompressed > x.maxUnit {
		u := &unit{stream: newXzBlockStream(x.in, h, check, rec), release: make(chan struct{})}
		return emit(u)
	}
	in := getBuf(int(h.compressed + h.tail(h.compressed, checkSize)))
	if _, err := io.ReadFull(x.in, in); err != nil {
		return unexpected(err)
	}
	*rec = h.record(h.compressed, h.uncompressed, checkSize)
	return emit(&unit{in: in, done: make(chan struct{}),
		decode: func(in []byte) ([]byte, error) { return decodeXzBlock(h, check, in) }})
}

// skipPadding reads the zeros after a stream: false at the end of the
// input, true when another stream starts.
func (x *xzSplitter) skipPadding() (bool, error) {
	zeros := 0
	for {
		b, err := x.in.Peek(1)
		if err == io.EOF {
			if zeros%4 != 0 {
				return false, corrupt("xz stream padding of %d bytes, not a multiple of four", zeros)
			}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if b[0] != 0 {
			if zeros%4 != 0 {
				return false, corrupt("xz stream padding of %d bytes, not a multiple of four", zeros)
			}
			return true, nil
		}
		x.in.ReadByte()
		zeros++
	}
}
