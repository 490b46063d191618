package engine

import (
	"time"

	"github.com/ringcp/ringcp/align"
)

// phase is where a slot is in its cycle.
type phase uint8

const (
	phaseFree      phase = iota
	phaseRead            // a read of the chunk is in flight
	phaseWrite           // a write of a data segment is in flight
	phaseTailReady       // read done; the unaligned last chunk waits for the other writes
	phaseTailWrite       // the tail's buffered write is in flight
	phaseZeroOp          // a fallocate making a zero segment zero on DST is in flight
	phaseZeroWrite       // a write of zeros is in flight (no fallocate worked)
	phaseReadDst         // a read pass comparing: DST's side of the chunk is being read
)

// slot owns one buffer and the chunk it is moving. A read chunk is cut into
// segments, runs of data and runs of zeros, handled one after the other;
// a hole chunk is one zero segment and is never read.
type slot struct {
	buf   []byte
	phase phase
	rel   int64 // chunk offset from the start of the range
	n     int   // chunk length
	hole  bool  // a hole in SRC: nothing was read into buf
	// The current segment is [seg, segEnd) of the chunk.
	seg, segEnd int
	segZero     bool
	// mode is the fallocate mode of the slot's zero op: a retry sends the
	// same call again, and a refusal turns off that method, not whichever
	// is current by the time it comes back.
	mode uint32
	// done counts the bytes of the current request's span already moved;
	// start is where the request in flight began, to tell progress from a
	// short transfer that cannot advance.
	start, done int
	// paid counts the bytes of the current span the rate caps were paid
	// for (pace.go): a request sent again after a short transfer pays only
	// for what it moves beyond.
	paid  int
	retry retryState // -EAGAIN/-EINTR in a row for its request
	// sentAt is when its request in flight was submitted; busy sums how
	// long the chunk's requests were in flight (window.go).
	sentAt time.Time
	busy   time.Duration
	// A sync's differing runs of the chunk, and the next one to write.
	changes []change
	change  int
}

// writing: the slot's request writes or zeroes DST.
func (s *slot) writing() bool {
	switch s.phase {
	case phaseWrite, phaseTailWrite, phaseZeroOp, phaseZeroWrite:
		return true
	}
	return false
}

// reading: the slot's request reads, so nobody waits for it once the
// copy stops.
func (s *slot) reading() bool { return s.phase == phaseRead || s.phase == phaseReadDst }

// request builds the request that moves the rest of the slot's current
// span, restarting at an aligned position so O_DIRECT accepts it, and
// moving at most most bytes (a multiple of the job's unit): a span larger
// than that goes in several requests.
func (j *Job) request(idx int, s *slot, most int) Request {
	q := Request{Slot: idx, Op: OpWrite, File: FileDst}
	switch s.phase {
	case phaseRead:
		s.start = alignDown(s.done, j.SrcAlign)
		// O_DIRECT reads whole aligned units; bytes past the chunk are
		// read and ignored, and a read past EOF comes back short.
		end := min(alignUp(s.n, j.SrcAlign), j.chunkMax(), s.start+most)
		q.Op, q.File, q.Buf, q.Off = OpRead, FileSrc, s.buf[s.start:end], j.SrcOff+s.rel+int64(s.start)
		return q
	case phaseReadDst:
		half := j.chunkMax()
		s.start = alignDown(s.done, j.DstAlign)
		end := min(alignUp(s.n, j.DstAlign), half, s.start+most)
		q.Op, q.Buf, q.Off = OpRead, s.buf[half+s.start:half+end], j.DstOff+s.rel+int64(s.start)
		return q
	case phaseWrite, phaseTailWrite:
		a := j.DstAlign
		if s.phase == phaseTailWrite {
			a, q.File = 1, j.tailFile()
		}
		s.start = alignDown(s.done, a)
		q.Buf = s.buf[s.seg+s.start : min(s.segEnd, s.seg+s.start+most)]
	case phaseZeroOp:
		s.start = 0
		q.Op, q.Len, q.Mode = OpFallocate, int64(s.segEnd-s.seg), s.mode
	case phaseZeroWrite:
		s.start = alignDown(s.done, j.DstAlign)
		q.Buf = s.zeros(s.start, most)
	default:
		panic("engine: request for an idle slot")
	}
	q.Off = j.DstOff + s.rel + int64(s.seg+s.start)
	return q
}

// zeros is the buffer for a write of zeros from offset from of the
// segment, at most most bytes: a read chunk's zero run is zeros in place;
// a hole chunk writes from its cleared buffer, a block at a time.
func (s *slot) zeros(from, most int) []byte {
	if !s.hole {
		return s.buf[s.seg+from : min(s.segEnd, s.seg+from+most)]
	}
	return s.buf[:min(len(s.buf), s.segEnd-s.seg-from, most)]
}

// directEnd is where the chunk's writes with O_DIRECT end: the whole
// chunk, except for the last chunk of a range whose length is not a
// multiple of DST's alignment, whose last bytes are the tail.
func (j *Job) directEnd(s *slot) int {
	return alignDown(s.n, j.DstAlign)
}

// alignDown and alignUp are align's rounding for the int offsets within a
// slot's buffer.
func alignDown(n, a int) int { return int(align.RoundDown(int64(n), int64(a))) }

func alignUp(n, a int) int { return int(align.RoundUp(int64(n), int64(a))) }

// tailFile is the end the unaligned last block is written through: the
// caller's buffered FileDstTail when it gave one, else DST itself once
// bufferTail has readied it.
func (j *Job) tailFile() FileID {
	if j.end(FileDstTail) != nil {
		return FileDstTail
	}
	return FileDst
}
