package copier

import "github.com/ringcp/ringcp/internal/units"

// The buffers of a SRC read in order (stdin, a pipe, a compressed image
// from a file or a URL): the engine reads such a SRC one request at a
// time, in order, so its depth serves only the writes to DST behind the
// read, and blocks of a stream are filled by a copy from a decompressor
// or a pipe, not by a device that wants large requests. Four blocks of
// 4 MiB keep three writes in flight behind the read (a loop device or
// disk takes a 4 MiB O_DIRECT write in a few milliseconds, the
// decompressors give a few hundred MB/s) in 16 MiB, where the default
// eight of 8 MiB held 64 MiB, most of the importer's memory (ringcp
// cdi-importer, issue 26). A block size or depth given is kept.
const (
	streamBlock = 4 << 20
	streamDepth = 4
)

// fitStream shrinks a stream SRC's block size and depth to streamBlock
// and streamDepth, each unless given.
func (s *sizes) fitStream(in sizing) {
	if !in.seq {
		return
	}
	if in.askBlock == 0 && s.block > streamBlock {
		bs := max(in.unit(), streamBlock/in.unit()*in.unit())
		s.block = int(bs)
		s.note("block size %s: SRC is read in order, a block at a time, from a stream", units.Format(bs))
	}
	if in.askDepth == 0 && s.depth > streamDepth {
		s.depth = streamDepth
		s.note("queue depth %d: SRC is read in order, one read at a time; the depth keeps writes to DST in flight behind it", streamDepth)
	}
}
