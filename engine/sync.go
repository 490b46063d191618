package engine

import (
	"bytes"

	"github.com/ringcp/ringcp/internal/zeros"
)

// A sync (Job.SyncGranule) runs through the same slots as a copy: a
// slot reads its chunk of SRC into the first half of its buffer, the
// same bytes of DST into the second, compares them granule by granule,
// and then writes only the granules that differ, one segment each run
// of them, through the copy's own write, zero and tail paths. Unchanged
// granules finish without I/O. The comparison is blocksync.Compare's
// (a test holds them equal); it lives here too so that the engine does
// not import the packages blocksync needs to open ends.

// change is a run of granules of a slot's chunk that DST must get:
// [off, end) from the chunk's start, all zeros in SRC when zero.
type change struct {
	off, end int
	zero     bool
}

// syncing: the job writes only what differs from DST.
func (j *Job) syncing() bool { return j.SyncGranule > 0 && j.Check == nil }

// chunkCap is the most a chunk planned now may hold when requests move
// at most most bytes: most itself, or for a sync whole granules of it
// (at least one), so that every chunk starts on the granule grid and a
// granule is compared whole; such a chunk then moves in several
// requests.
func (j *Job) chunkCap(most int) int {
	if g := j.SyncGranule; j.syncing() {
		return max(g, alignDown(most, g))
	}
	return most
}

// SyncStats is what a sync did beyond a copy's Stats.
type SyncStats struct {
	BytesReadDst    int64 // bytes of DST read to compare
	GranulesChanged int64 // granules written or made zero
}

// compareGranules appends to out the runs of granules of g bytes where
// dst differs from src, neighbours of the same kind merged.
func compareGranules(src, dst []byte, g int, out []change) []change {
	if bytes.Equal(src, dst) {
		return out
	}
	for i := 0; i < len(src); i += g {
		end := min(i+g, len(src))
		if bytes.Equal(src[i:end], dst[i:end]) {
			continue
		}
		c := change{off: i, end: end, zero: zeros.Is(src[i:end])}
		if k := len(out) - 1; k >= 0 && out[k].end == c.off && out[k].zero == c.zero {
			out[k].end = c.end
			continue
		}
		out = append(out, c)
	}
	return out
}

// syncRead handles a sync's chunk once both sides are read: the
// differences become the slot's segments.
func (r *run) syncRead(idx int, s *slot) {
	half, g := r.job.chunkMax(), r.job.SyncGranule
	r.stats.BytesReadDst += int64(s.n)
	s.changes = compareGranules(s.buf[:s.n], s.buf[half:half+s.n], g, s.changes[:0])
	for _, c := range s.changes {
		r.stats.GranulesChanged += int64((c.end - c.off + g - 1) / g)
	}
	s.change, s.seg, s.segEnd = 0, 0, 0
	r.nextChange(idx)
}

// nextChange starts the slot's next differing run, counting the
// unchanged bytes before it as done, or finishes the chunk. A run that
// reaches into the unaligned end of the range leaves that end to the
// tail, as a copy does.
func (r *run) nextChange(idx int) {
	s := &r.slots[idx]
	s.seg = s.segEnd
	next := s.n
	if s.change < len(s.changes) {
		next = max(s.seg, s.changes[s.change].off)
	}
	if next > s.seg {
		if p := r.job.Progress; p != nil {
			p.Done.Add(int64(next - s.seg))
		}
		s.seg = next
	}
	if s.seg >= s.n {
		r.chunkDone(idx)
		return
	}
	c := s.changes[s.change]
	end := r.job.directEnd(s)
	if s.seg >= end {
		// Only the last granule of the range ends unaligned (granules
		// are multiples of the alignment), so this run ends at s.n.
		s.segEnd, s.segZero, s.phase = s.n, false, phaseTailReady
		s.change++
		r.tail = idx
		return
	}
	s.segEnd, s.segZero = min(c.end, end), c.zero
	if s.segEnd == c.end {
		s.change++
	}
	r.startSegment(idx)
}
