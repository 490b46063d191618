package copier

import (
	"testing"

	"github.com/ringcp/ringcp/align"
)

// TestFitStream: a SRC read in order gets 4 blocks of 4 MiB instead of
// the default 8 of 8 MiB; a block size or depth given is kept; a SRC
// read at offsets is left alone.
func TestFitStream(t *testing.T) {
	stream := align.Geometry{Size: 1 << 40, MemAlign: 1, OffsetAlign: 1}
	dev := align.Geometry{Size: 1 << 40, MemAlign: 512, OffsetAlign: 512, DirectSupported: true}
	for _, c := range []struct {
		name                 string
		in                   sizing
		wantBlock, wantDepth int
	}{
		{"stream", sizing{src: stream, dst: dev, seq: true}, streamBlock, streamDepth},
		{"stream, block given", sizing{src: stream, dst: dev, seq: true, askBlock: 1 << 20}, 1 << 20, streamDepth},
		{"stream, depth given", sizing{src: stream, dst: dev, seq: true, askDepth: 16}, streamBlock, 16},
		{"not a stream", sizing{src: dev, dst: dev}, align.DefaultBlockSize, align.DefaultQueueDepth},
	} {
		s := decideSizes(c.in)
		if s.block != c.wantBlock || s.depth != c.wantDepth {
			t.Errorf("%s: block %d depth %d, want %d and %d (%q)", c.name, s.block, s.depth, c.wantBlock, c.wantDepth, s.why)
		}
	}
}
