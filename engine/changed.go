package engine

import (
	"fmt"

	"github.com/ringcp/ringcp/extents"
)

// Changed restricts a copy to what changed: only some ranges (Ranges, for
// an extent list or a dirty bitmap), or only the granules where DST
// differs from SRC (SyncGranule, sync.go).
type Changed struct {
	// RangesOnly restricts the copy to Ranges: the rest of the range is
	// neither read nor written, and DST keeps its bytes there. Ranges is
	// in normal form (extents.Merge), its offsets from the range start
	// (SRC's and DST's alike), every edge a multiple of both alignments
	// except at the range's end. An empty Ranges copies nothing.
	RangesOnly bool
	Ranges     extents.List
	// SyncGranule, when positive, makes the copy a sync: each chunk of
	// SRC and the same bytes of DST are read into the two halves of a
	// slot, compared granule by granule, and only the granules that
	// differ are written (or made zero, when SRC's granule is all zeros,
	// as a copy makes zero runs). A power of two, a multiple of both
	// alignments, dividing half a block; DST must hold the whole range
	// (grow a file first). MapHoles is not used: DST may hold data where
	// SRC has a hole.
	SyncGranule int
}

// validateChanged catches Changed settings the engine cannot run.
func (j *Job) validateChanged() error {
	a := int64(max(j.SrcAlign, j.DstAlign, 1))
	if j.RangesOnly {
		if err := j.Ranges.Valid(); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		for _, r := range j.Ranges {
			if r.End() > j.Length || r.Off%a != 0 || (r.End()%a != 0 && r.End() != j.Length) {
				return fmt.Errorf("engine: range %v is past the length %d or not aligned to %d", r, j.Length, a)
			}
		}
	}
	g := j.SyncGranule
	switch {
	case g == 0:
		return nil
	case g < 0 || g&(g-1) != 0 || int64(g)%a != 0 || (j.BlockSize/2)%g != 0:
		return fmt.Errorf("engine: sync granule %d is not a power of two, a multiple of alignment %d and a divisor of half block %d", g, a, j.BlockSize/2)
	case j.Check != nil || j.RangesOnly:
		return fmt.Errorf("engine: a sync is neither a read pass nor restricted to ranges")
	case j.DstZeroed:
		return fmt.Errorf("engine: a sync reads DST: it cannot be vouched zero")
	}
	return nil
}

// skip moves the planner past the bytes outside Ranges, if it is at
// any, and returns the gap it skipped (n 0 when none).
func (p *planner) skip() (rel, n int64) {
	if !p.job.RangesOnly {
		return 0, 0
	}
	rs := p.job.Ranges
	for p.ri < len(rs) && rs[p.ri].End() <= p.pos {
		p.ri++
	}
	to := p.job.Length
	if p.ri < len(rs) {
		to = max(p.pos, rs[p.ri].Off)
	}
	rel, n = p.pos, max(to-p.pos, 0)
	p.pos += n
	return rel, n
}

// limit is where the chunk starting at pos must end at the latest: the
// end of the range it is in.
func (p *planner) limit() int64 {
	if !p.job.RangesOnly || p.ri >= len(p.job.Ranges) {
		return p.job.Length
	}
	return p.job.Ranges[p.ri].End()
}

// skipGap counts a gap between Ranges as finished: nothing is to be done
// there, and the prefix a stopped copy keeps runs across it.
func (r *run) skipGap() {
	if rel, n := r.planner.skip(); n > 0 {
		r.prefix.add(rel, n)
		r.stats.Contiguous = r.prefix.end
	}
}
