package copier

import (
	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/internal/units"
)

// roundBlockSize rounds a block size asked for that is not a multiple of
// the ends' O_DIRECT alignment down to one (at least one alignment unit),
// with DirectAuto. Taken as it is, it would turn O_DIRECT off on that side
// (chooseDirect), and a buffered copy through the page cache costs many
// times the CPU (-b 4MB, 4,000,000 bytes, measured 50x): the request's
// size is a tuning knob, O_DIRECT is what the tool is for. The note says
// so, and Plan.BlockSize differs from Options.BlockSize. DirectAlways
// refuses such a size (chooseDirect); DirectNever takes it as it is.
func (p *Plan) roundBlockSize() error {
	o := &p.opts
	if o.BlockSize == 0 || o.Direct != DirectAuto {
		return nil
	}
	unit := int64(1)
	for _, ep := range []*endpoint{p.src, p.dst} {
		if ep.geo.DirectSupported {
			unit = align.LCM(unit, int64(ep.geo.DirectAlign()))
		}
	}
	bs := int64(o.BlockSize)
	if align.IsAligned(bs, unit) {
		return nil
	}
	rounded := max(unit, align.RoundDown(bs, unit))
	p.note("block size %d (%s) rounded to %d (%s), a multiple of the O_DIRECT alignment %d: otherwise O_DIRECT would be off",
		bs, units.Format(bs), rounded, units.Format(rounded), unit)
	o.BlockSize = int(rounded)
	return nil
}
