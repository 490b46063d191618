package copier

import (
	"fmt"

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
	}{{p.src, o.SrcOffset, "SRC"}, {p.dst, o.DstOffset, "DST"}}
	for _, s := range sides {
		if !s.ep.canDirect {
			continue // not a descriptor: its kind noted how it is reached
		}
		reason := s.ep.directObstacle(p, s.off)
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
