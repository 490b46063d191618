package copier

import (
	"fmt"
	"math"

	"github.com/ringcp/ringcp/align"
)

// chooseDirect decides O_DIRECT for each side. auto takes it wherever the
// file, the offsets and the block size allow, and says why not elsewhere;
// always refuses where it cannot.
func (p *Plan) chooseDirect() error {
	o := &p.opts
	sides := []struct {
		ep  *endpoint
		off int64
		tag string
	}{{&p.src, o.SrcOffset, "SRC"}, {&p.dst, o.DstOffset, "DST"}}
	for _, s := range sides {
		if !s.ep.local() {
			continue // no O_DIRECT over a socket; checkExports noted the export
		}
		reason := p.directObstacle(s.ep, s.off)
		switch {
		case o.Direct == DirectNever:
			s.ep.why = "buffered: Options.Direct never"
		case reason == "":
			s.ep.direct = true
			s.ep.why = fmt.Sprintf("O_DIRECT, alignment %d", s.ep.geo.DirectAlign())
		case o.Direct == DirectAlways:
			return refuse(KindNotSupported, s.ep.path, "Options.Direct always: "+reason).on("Direct")
		default:
			s.ep.why = "buffered: " + reason
		}
		p.note("%s %s: %s", s.tag, s.ep.path, s.ep.why)
	}
	p.noteBufferedTail()
	return nil
}

// noteBufferedTail says when the last bytes of the range are written
// without O_DIRECT: a length that is not a multiple of DST's alignment
// ends in a tail O_DIRECT cannot write (the engine's bufferTail).
func (p *Plan) noteBufferedTail() {
	a := int64(p.dst.geo.DirectAlign())
	if !p.dst.direct || p.Length == 0 || align.IsAligned(p.Length, a) {
		return
	}
	p.note("DST: the last %d bytes (the length is not a multiple of %d) are written buffered, after every other write", p.Length%a, a)
}

// directObstacle says what keeps ep from O_DIRECT, or "".
func (p *Plan) directObstacle(ep *endpoint, off int64) string {
	a := int64(ep.geo.DirectAlign())
	switch {
	case !ep.geo.DirectSupported:
		return "the filesystem does not support O_DIRECT"
	case !align.IsAligned(off, a):
		return fmt.Sprintf("offset %d is not a multiple of the alignment %d", off, a)
	case p.opts.BlockSize != 0 && !align.IsAligned(int64(p.opts.BlockSize), a):
		return fmt.Sprintf("block size %d is not a multiple of the alignment %d", p.opts.BlockSize, a)
	case off+p.Length > math.MaxInt64-(a-1):
		// An O_DIRECT read of the unaligned last block is rounded up to
		// the alignment, past the largest offset the kernel takes.
		return fmt.Sprintf("the range ends within %d bytes of the largest file offset", a)
	}
	if err := ep.tryDirect(); err != nil {
		return fmt.Sprintf("O_DIRECT open failed (%v)", err)
	}
	return ""
}

// alignment is what the engine must respect on this side.
func (ep *endpoint) alignment() int {
	if a := ep.exportAlign(); a > 0 {
		return a // an export's minimum block size: every request's offset and length
	}
	if !ep.direct {
		return 1
	}
	return ep.geo.DirectAlign()
}
