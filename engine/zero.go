package engine

import (
	"syscall"

	"github.com/ringcp/ringcp/internal/zeros"
)

// zeroAction is how a zero run reaches DST.
type zeroAction uint8

const (
	zeroSkip  zeroAction = iota // DST already reads zeros there: no I/O
	zeroOp                      // fallocate PUNCH_HOLE or ZERO_RANGE
	zeroWrite                   // plain writes of zeros, where no fallocate works
)

type zeroMethod struct {
	mode uint32
	name string
}

// zeroMethods, cheapest first. PUNCH_HOLE frees the blocks (on a block
// device: WRITE_ZEROES with unmap allowed, which still guarantees zeros,
// never a discard); ZERO_RANGE zeroes in place (on a block device the
// kernel falls back to writing zero pages itself, like BLKZEROOUT). Both
// keep the size.
var zeroMethods = []zeroMethod{
	{fallocPunchHole | fallocKeepSize, "fallocate(PUNCH_HOLE)"},
	{fallocZeroRange | fallocKeepSize, "fallocate(ZERO_RANGE)"},
}

// zeroer finds zero runs in what was read and decides how DST gets them.
// The methods that failed as unsupported stay off for the rest of the copy.
type zeroer struct {
	block     int // detection granularity; 0: off
	dstZeroed bool
	methods   []zeroMethod
}

func newZeroer(job *Job) zeroer {
	return zeroer{block: job.ZeroBlock, dstZeroed: job.DstZeroed, methods: zeroMethods}
}

// scan returns the segment of buf that starts at from: a run of whole
// zero blocks, or a run of data. Without detection all of it is data.
func (z *zeroer) scan(buf []byte, from int) (end int, zero bool) {
	if z.block == 0 {
		return len(buf), false
	}
	zero = z.blockIsZero(buf, from)
	end = from
	for end < len(buf) && z.blockIsZero(buf, end) == zero {
		end = min(end+z.block, len(buf))
	}
	return end, zero
}

func (z *zeroer) blockIsZero(buf []byte, at int) bool {
	return zeros.Is(buf[at:min(at+z.block, len(buf))])
}

// plan decides what a zero run needs. On a DST that reads zeros it needs
// nothing, except a run inside a range this copy preallocated (reserved):
// punching it keeps DST as sparse as SRC (if punching is not possible, the
// reserved blocks read as zeros anyway).
func (z *zeroer) plan(reserved bool) zeroAction {
	switch {
	case z.dstZeroed && !reserved:
		return zeroSkip
	case reserved && (len(z.methods) == 0 || z.methods[0].mode&fallocPunchHole == 0):
		return zeroSkip
	case len(z.methods) > 0:
		return zeroOp
	}
	return zeroWrite
}

// leavesHole: the run ends as a hole that DST had anyway (our own
// reservation released), rather than old data made zero.
func (z *zeroer) leavesHole() bool { return z.dstZeroed }

// mode is the fallocate mode of the current method; plan returns zeroOp
// only while there is one.
func (z *zeroer) mode() uint32 { return z.methods[0].mode }

// zeroMethodName names a fallocate mode for errors.
func zeroMethodName(mode uint32) string {
	for _, m := range zeroMethods {
		if m.mode == mode {
			return m.name
		}
	}
	return "fallocate"
}

// drop turns mode off after the kernel said it cannot. Zero ops of several
// slots are in flight at once, so a refusal can come back after its method
// was already dropped: then it says nothing about the current one.
func (z *zeroer) drop(mode uint32) {
	if len(z.methods) > 0 && z.methods[0].mode == mode {
		z.methods = z.methods[1:]
	}
}

// unsupported: errnos by which fallocate says "not this mode, not here":
// EOPNOTSUPP (filesystem or device lacks it), EINVAL (mode or alignment not
// accepted, e.g. ZERO_RANGE on some filesystems), ENOSYS (old kernels).
func unsupported(errno syscall.Errno) bool {
	return errno == syscall.EOPNOTSUPP || errno == syscall.EINVAL || errno == syscall.ENOSYS
}
