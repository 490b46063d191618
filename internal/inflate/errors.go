package inflate

import (
	"errors"
	"fmt"
	"io"
)

// ErrCorrupt is what every error for malformed data wraps.
var ErrCorrupt = errors.New("deflate: corrupt stream")

// ErrLong is DecodeWhole's error for a stream that holds more data than
// the output.
var ErrLong = errors.New("deflate: stream goes on past the end of the output")

func corrupt(why string) error { return fmt.Errorf("%w: %s", ErrCorrupt, why) }

var (
	// errTruncated: the stream needed bits past the end of the input.
	// It wraps io.ErrUnexpectedEOF, as compress/flate's error does.
	errTruncated = fmt.Errorf("deflate: input ends inside the stream: %w", io.ErrUnexpectedEOF)
	// errShort: the last block ended before the output was full (what
	// io.ReadFull says of a stream that ends early).
	errShort = fmt.Errorf("deflate: stream ends before the output is full: %w", io.ErrUnexpectedEOF)

	errBlockType = corrupt("block type 3")
	errStoredLen = corrupt("stored block length does not match its complement")
	errCounts    = corrupt("more than 286 length or 30 distance codes")
	errRepeat    = corrupt("code length repeat with no length before it, or past the last code")
	errTree      = corrupt("over-subscribed or incomplete Huffman code")
	errCode      = corrupt("unused Huffman code")
	errNoEnd     = corrupt("dynamic block with no end-of-block code")
	// errBeyond marks what is found malformed past a full output (where
	// zlib reads on, compress/flate does not).
	errBeyond    = errors.New("past the end of the output, where zlib reads on")
	errDistance  = corrupt("match distance reaches before the start of the output")
	errTableFull = corrupt("Huffman code needs more sub-tables than a valid code can")
)
