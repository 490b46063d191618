package copier

import (
	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
)

// chooseSparse settles how holes and zeros are handled.
func (p *Plan) chooseSparse() error {
	o := &p.opts
	p.sparse = engine.Sparse{}
	if o.Sparse == SparseNever {
		p.note("sparse never: every byte copied as data")
		return nil
	}
	// SRC's kind says whether it can tell where its data is (a file can,
	// a device cannot).
	p.sparse.MapHoles = p.src.mapsHoles
	// A new or truncated file reads as zeros, and so does a device the
	// caller vouches for.
	p.sparse.DstZeroed = (!p.dst.exists || p.truncate || o.TargetIsZero) && !p.dst.notZeroed
	p.sparse.HoleAlign = p.dst.holeAlign
	zeroUseless := p.dst.fixedSize && !o.TargetIsZero && p.dst.geo.WriteZeroesMax == 0
	switch {
	case o.Sparse == SparseAuto && zeroUseless:
		p.note("zero detection off: %s has no WRITE_ZEROES, so zeros cost what data costs (Options.Sparse always scans anyway)", p.dst.path)
	default:
		unit, what := p.dst.zeroUnit, p.dst.zeroUnitWhat
		if unit == 0 {
			unit = p.dst.alignment()
		}
		zb := int(align.RoundUp(int64(o.ZeroBlock), int64(unit)))
		if zb != o.ZeroBlock {
			p.note("zero block %d rounded up to %s: %d", o.ZeroBlock, what, zb)
		}
		p.sparse.ZeroBlock = zb
	}
	p.note("sparse %s: holes mapped %v, zero block %d, DST reads as zeros %v",
		o.Sparse, p.sparse.MapHoles, p.sparse.ZeroBlock, p.sparse.DstZeroed)
	return nil
}
