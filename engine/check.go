package engine

import "errors"

// A read pass (Job.Check) writes nothing: it reads SRC's range, or SRC's
// and DST's together, chunk by chunk through the same slots and backend as
// a copy, and hands each chunk to Check. It verifies a copy after its
// barrier (DST against the digests taken while copying), compares two
// existing files (ringcp verify), or checksums one (ringcp checksum).

// CheckFunc looks at one chunk of a read pass: rel is its offset from the
// range start, src the bytes read from SRC's range, dst the same bytes of
// DST's range when comparing (nil otherwise). The slices are valid only
// during the call. An error stops the pass and is returned from Run.
type CheckFunc func(rel int64, src, dst []byte) error

// ErrEndedEarly: a read pass found end of file inside the range.
var ErrEndedEarly = errors.New("ended before the range did")

// comparing: the pass reads DST's range beside SRC's.
func (j *Job) comparing() bool { return j.Check != nil && j.end(FileDst) != nil }

// chunkMax is the most one chunk holds: a block, or half of one when a
// slot's buffer holds both sides of a compare.
func (j *Job) chunkMax() int {
	if j.comparing() || j.syncing() {
		return j.BlockSize / 2
	}
	return j.BlockSize
}

// checkRead handles a read pass's completed read: a compare reads DST's
// side next; then the chunk goes to Check.
func (r *run) checkRead(idx int, s *slot) {
	if s.phase == phaseRead && r.job.comparing() {
		s.phase, s.done, s.paid = phaseReadDst, 0, 0
		r.send(idx)
		return
	}
	var dst []byte
	if r.job.comparing() {
		half := r.job.chunkMax()
		dst = s.buf[half : half+s.n]
	}
	if err := r.job.Check(s.rel, s.buf[:s.n], dst); err != nil {
		r.fail(err)
		r.release(idx)
		return
	}
	r.chunkDone(idx)
}
