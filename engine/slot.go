package engine

import "github.com/ringcp/ringcp/align"

// phase is where a slot is in its cycle.
type phase uint8

const (
	phaseFree      phase = iota
	phaseRead            // a read of the block is in flight
	phaseWrite           // a write of the block is in flight
	phaseTailReady       // read done; the unaligned last block waits for the other writes
	phaseTailWrite       // the tail's buffered write is in flight
)

// slot owns one buffer and the block it is moving. done counts the bytes of
// the current phase already moved; start is where the request in flight
// began, to tell progress from a short transfer that cannot advance.
type slot struct {
	buf   []byte
	phase phase
	rel   int64 // block offset from the start of the range
	n     int   // block length
	start int
	done  int
}

// request builds the request that moves the rest of the slot's phase,
// restarting at an aligned position so O_DIRECT accepts it.
func (j *Job) request(idx int, s *slot) Request {
	switch s.phase {
	case phaseRead:
		a := j.SrcAlign
		s.start = int(align.RoundDown(int64(s.done), int64(a)))
		// O_DIRECT reads whole aligned units; bytes past the block are
		// read and ignored, and a read past EOF comes back short.
		end := min(int(align.RoundUp(int64(s.n), int64(a))), len(s.buf))
		return Request{Op: OpRead, File: FileSrc, Slot: idx, Buf: s.buf[s.start:end], Off: j.SrcOff + s.rel + int64(s.start)}
	case phaseWrite:
		s.start = int(align.RoundDown(int64(s.done), int64(j.DstAlign)))
		return Request{Op: OpWrite, File: FileDst, Slot: idx, Buf: s.buf[s.start:s.n], Off: j.DstOff + s.rel + int64(s.start)}
	case phaseTailWrite:
		s.start = s.done
		return Request{Op: OpWrite, File: FileDstTail, Slot: idx, Buf: s.buf[s.start:s.n], Off: j.DstOff + s.rel + int64(s.start)}
	}
	panic("engine: request for an idle slot")
}

// isTail says the block cannot be written with O_DIRECT: only the last
// block of a range can have a length that is not a multiple of DstAlign.
func (j *Job) isTail(s *slot) bool {
	return !align.IsAligned(int64(s.n), int64(j.DstAlign))
}
