package copier

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/units"
)

// spaceCheck is checkSpace for the jobs of a batch that write files on one
// filesystem: each had the room alone (Prepare), but they run at once,
// and together they may not fit. Each job of such a filesystem is
// refused, naming the others, instead of one of them failing with ENOSPC
// after most of the data moved. Options.Force lifts it for its jobs, as
// for one copy.
func (b *Batch) spaceCheck() []*JobError {
	byFS := map[uint64][]int{}
	var order []uint64
	for i, p := range b.Plans {
		if p == nil || !p.takesSpace() {
			continue
		}
		r, _ := p.dst.space(p)
		if byFS[r.fs] == nil {
			order = append(order, r.fs)
		}
		byFS[r.fs] = append(byFS[r.fs], i)
	}
	var out []*JobError
	for _, fs := range order {
		if jobs := byFS[fs]; len(jobs) > 1 {
			out = append(out, b.spaceTogether(jobs)...)
		}
	}
	slices.SortFunc(out, func(a, b *JobError) int { return cmp.Compare(a.Index, b.Index) })
	return out
}

// takesSpace: the job allocates blocks on DST's filesystem, and its room
// is checked (not Force).
func (p *Plan) takesSpace() bool {
	_, takes := p.dst.space(p)
	return takes && p.offloadMode != OffloadReflink && p.Length > 0 && !p.opts.Force
}

// spaceTogether refuses the jobs (of one filesystem) when what they
// allocate together exceeds its free blocks plus what their DSTs give
// back. What SRC's data needs is counted first; only when that does not
// fit are zeros counted too, which reads SRC (as checkSpace does).
func (b *Batch) spaceTogether(jobs []int) []*JobError {
	first, _ := b.Plans[jobs[0]].dst.space(b.Plans[jobs[0]])
	free, err := guard.Free(first.at, 0)
	if err != nil {
		return nil
	}
	for _, i := range jobs {
		r, _ := b.Plans[i].dst.space(b.Plans[i])
		free += r.reclaimed
	}
	if _, fits := b.needTogether(jobs, free, free); fits {
		return nil
	}
	names := make([]string, len(jobs))
	for k, i := range jobs {
		names[k] = fmt.Sprint(i + 1)
	}
	need, fits := b.needTogether(jobs, 0, free)
	if fits {
		b.fitWithoutReserving(jobs, strings.Join(names, ", "))
		return nil
	}
	why := fmt.Sprintf("DST's filesystem has %s free; jobs %s write there at once and need %s (%d bytes) together (each fits alone; Options.Force tries anyway)",
		units.Format(free), strings.Join(names, ", "), units.Format(need), need)
	out := make([]*JobError, len(jobs))
	for k, i := range jobs {
		out[k] = &JobError{Index: i, Err: refuse(KindNoRoom, b.Plans[i].dst.path, why).on("Dst")}
	}
	return out
}

// fitWithoutReserving: the jobs fit together only because the zero
// blocks of their SRCs stay holes. Their DSTs are then not preallocated:
// a job reserves its SRC's data extents ahead of its writes, zero runs
// included (they are punched only as the copy reaches them), and those
// reservations would take the room another job is writing into.
func (b *Batch) fitWithoutReserving(jobs []int, names string) {
	for _, i := range jobs {
		b.noReserve[b.Plans[i]] = true
		b.Plans[i].note("room: jobs %s fit on DST's filesystem together only because zeros stay holes: DST is not preallocated", names)
	}
}

// needTogether adds up what the jobs allocate (spaceNeeded, reading zeros
// where a job's data exceeds scanAbove) and says whether it fits in free.
func (b *Batch) needTogether(jobs []int, scanAbove, free int64) (need int64, fits bool) {
	var margin int64
	for _, i := range jobs {
		r, err := b.Plans[i].spaceNeeded(scanAbove)
		if err != nil {
			return 0, true // cannot tell: as checkSpace, let the copy try
		}
		need, margin = need+r.need, margin+r.margin
	}
	return need, need <= free+margin
}
