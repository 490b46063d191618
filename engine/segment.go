package engine

import (
	"syscall"
)

// nextSegment starts the slot's next segment, or finishes the chunk. The
// unaligned last chunk of a range goes through its aligned part like any
// other; only the rest, less than one alignment unit, waits as the tail.
func (r *run) nextSegment(idx int) {
	s := &r.slots[idx]
	if r.job.syncing() {
		r.nextChange(idx)
		return
	}
	s.seg = s.segEnd
	if s.seg >= s.n {
		r.chunkDone(idx)
		return
	}
	end := r.job.directEnd(s)
	if s.seg >= end {
		// The tail waits until every other write has completed
		// (startTail).
		s.segEnd, s.segZero, s.phase = s.n, false, phaseTailReady
		r.tail = idx
		return
	}
	s.segEnd, s.segZero = r.zero.scan(s.buf[:end], s.seg)
	r.startSegment(idx)
}

// startSegment issues the I/O for the slot's current segment: a write of
// data, or whatever makes a zero run zero on DST (maybe nothing at all).
func (r *run) startSegment(idx int) {
	s := &r.slots[idx]
	s.done, s.paid = 0, 0
	if !s.segZero {
		s.phase = phaseWrite
		r.queue(idx)
		return
	}
	switch r.zero.plan(r.inReserve(s)) {
	case zeroSkip:
		r.finished(countHoles, s)
		r.segmentDone(idx)
	case zeroOp:
		s.phase, s.mode = phaseZeroOp, r.zero.mode()
		r.queue(idx)
	case zeroWrite:
		s.phase = phaseZeroWrite
		if s.hole {
			clear(s.buf) // a hole chunk's buffer holds an earlier chunk's data
			r.send(idx)
			return
		}
		r.queue(idx)
	}
}

// inReserve: the slot's zero run, not one of SRC's holes, lies in blocks
// this copy reserved on a DST that read as zeros (planner.zerosReserved).
func (r *run) inReserve(s *slot) bool {
	return !s.hole && r.zero.dstZeroed && r.planner.zerosReserved(s.rel+int64(s.seg))
}

// zeroOpDone handles a fallocate's completion: an errno that says "not
// supported here" turns that method off for the rest of the copy and tries
// the next one on the same segment.
func (r *run) zeroOpDone(idx int, s *slot, errno syscall.Errno) {
	switch {
	case errno == 0:
		if r.zero.leavesHole() {
			r.finished(countHoles, s)
		} else {
			r.finished(countZeroed, s)
		}
		r.segmentDone(idx)
	case unsupported(errno):
		r.zero.drop(s.mode)
		r.startSegment(idx)
	default:
		r.fail(r.opError(s, errno))
		r.release(idx)
	}
}

// segmentDone moves to the next segment, counting the finished one.
func (r *run) segmentDone(idx int) {
	s := &r.slots[idx]
	if p := r.job.Progress; p != nil {
		p.Done.Add(int64(s.segEnd - s.seg))
	}
	r.nextSegment(idx)
}

// chunkDone frees the slot and records the chunk as written.
func (r *run) chunkDone(idx int) {
	s := &r.slots[idx]
	if s.busy > 0 {
		r.meter.chunk(s.n, s.busy)
	}
	r.prefix.add(s.rel, int64(s.n))
	r.stats.Contiguous = r.prefix.end
	r.release(idx)
}
