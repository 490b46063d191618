package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Run copies job with a backend built by newBackend. See the package doc
// for the contract. Stats are valid even when err is not nil.
func Run(ctx context.Context, job Job, newBackend NewBackend) (Stats, error) {
	if err := job.validate(); err != nil {
		return Stats{}, err
	}
	// One OS thread for the whole copy: io_uring SINGLE_ISSUER rings accept
	// enter only from the thread that created them.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	be, err := newBackend(Setup{Files: job.Files, Buffers: job.Buffers, Depth: len(job.Buffers)})
	if err != nil {
		return Stats{}, err
	}
	r := newRun(&job, be)
	err = r.copy(ctx)
	if cerr := be.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return r.stats, err
}

// run is the state of one copy.
type run struct {
	job      *Job
	be       Backend
	slots    []slot
	free     []int // indexes of free slots
	next     int64 // offset, from the range start, of the next block to plan
	pending  []Request
	inflight int
	tail     int   // slot in phaseTailReady, or -1
	failed   error // first I/O error; stops everything
	canceled error // ctx.Err() once seen; stops new reads only
	stats    Stats
	cqes     []Completion
	prefix   prefix
}

// prefix tracks how far DST is complete without gaps from the range start:
// blocks finish out of order, and a stopped copy is cut back to this point
// so it never looks finished.
type prefix struct {
	end     int64
	pending map[int64]int64 // finished blocks past a gap: offset -> length
}

func (p *prefix) add(rel, n int64) {
	if rel != p.end {
		if p.pending == nil {
			p.pending = make(map[int64]int64)
		}
		p.pending[rel] = n
		return
	}
	p.end += n
	for {
		m, ok := p.pending[p.end]
		if !ok {
			return
		}
		delete(p.pending, p.end)
		p.end += m
	}
}

func newRun(job *Job, be Backend) *run {
	depth := len(job.Buffers)
	r := &run{job: job, be: be, tail: -1,
		slots: make([]slot, depth), free: make([]int, 0, depth),
		pending: make([]Request, 0, depth+1), cqes: make([]Completion, depth+1)}
	for i := depth - 1; i >= 0; i-- {
		r.slots[i].buf = job.Buffers[i][:job.BlockSize]
		r.free = append(r.free, i)
	}
	r.stats.Backend, r.stats.Caps = be.Name(), be.Caps()
	return r
}

// stopping: no new blocks are started.
func (r *run) stopping() bool { return r.failed != nil || r.canceled != nil }

func (r *run) copy(ctx context.Context) error {
	done := ctx.Done()
	for {
		if r.canceled == nil {
			select {
			case <-done:
				r.canceled = ctx.Err()
			default:
			}
		}
		r.plan()
		r.startTail()
		if err := r.submit(); err != nil {
			return err
		}
		if r.inflight == 0 {
			break
		}
		n, err := r.be.Reap(r.cqes, 1)
		if err != nil {
			// The backend lost track of its requests: nothing more can be
			// trusted, and nothing is drained.
			return err
		}
		for _, c := range r.cqes[:n] {
			r.inflight--
			r.complete(c)
		}
	}
	return r.finish()
}

// plan gives each free slot the next block of the range.
func (r *run) plan() {
	for len(r.free) > 0 && r.next < r.job.Length && !r.stopping() {
		idx := r.free[len(r.free)-1]
		r.free = r.free[:len(r.free)-1]
		s := &r.slots[idx]
		s.rel, s.n = r.next, int(min(int64(r.job.BlockSize), r.job.Length-r.next))
		s.phase, s.done = phaseRead, 0
		r.next += int64(s.n)
		r.queue(idx)
	}
}

// startTail writes the unaligned last block once nothing else is in flight.
func (r *run) startTail() {
	if r.tail < 0 || r.inflight > 0 || len(r.pending) > 0 {
		return
	}
	idx := r.tail
	r.tail = -1
	if r.stopping() {
		r.release(idx)
		return
	}
	s := &r.slots[idx]
	s.phase, s.done = phaseTailWrite, 0
	r.queue(idx)
}

func (r *run) queue(idx int) {
	r.pending = append(r.pending, r.job.request(idx, &r.slots[idx]))
}

func (r *run) submit() error {
	if len(r.pending) == 0 {
		return nil
	}
	err := r.be.Submit(r.pending)
	if err == nil {
		r.inflight += len(r.pending)
	}
	r.pending = r.pending[:0]
	return err
}

func (r *run) release(idx int) {
	r.slots[idx].phase = phaseFree
	r.free = append(r.free, idx)
}

// complete maps one completion to the slot's next step. Every case is
// explicit: retry, error, short (requeue the rest), done, end of file.
func (r *run) complete(c Completion) {
	if c.Slot == SyncSlot {
		r.syncDone(c)
		return
	}
	s := &r.slots[c.Slot]
	switch {
	case (c.Errno == syscall.EAGAIN || c.Errno == syscall.EINTR) && !(r.stopping() && s.phase == phaseRead):
		// Resubmit as is: the kernel had no room or was interrupted.
		r.queue(c.Slot)
	case c.Errno == syscall.EAGAIN || c.Errno == syscall.EINTR:
		r.release(c.Slot) // a read nobody will write any more
	case c.Errno != 0:
		r.fail(r.opError(s, c.Errno))
		r.release(c.Slot)
	case s.phase == phaseRead:
		r.readDone(c.Slot, s, c.N)
	default:
		r.writeDone(c.Slot, s, c.N)
	}
}

func (r *run) readDone(idx int, s *slot, n int) {
	if r.stopping() {
		r.release(idx)
		return
	}
	if !r.advance(s, n, r.job.SrcAlign) {
		// A short read that cannot move forward is end of file: the range
		// was checked against SRC's size, so SRC shrank under us.
		r.fail(r.opError(s, ErrSourceShrank))
		r.release(idx)
		return
	}
	if s.done < s.n {
		r.queue(idx)
		return
	}
	r.stats.BytesRead += int64(s.n)
	if p := r.job.Progress; p != nil {
		p.Read.Add(int64(s.n))
	}
	s.done = 0
	if r.job.isTail(s) {
		s.phase = phaseTailReady
		r.tail = idx
		return
	}
	s.phase = phaseWrite
	r.queue(idx)
}

func (r *run) writeDone(idx int, s *slot, n int) {
	a := r.job.DstAlign
	if s.phase == phaseTailWrite {
		a = 1
	}
	if !r.advance(s, n, a) {
		r.fail(r.opError(s, errShortWrite))
		r.release(idx)
		return
	}
	if s.done < s.n {
		// A short write with the rest still to go is retried even when
		// stopping: what was handed to DST is finished, not torn.
		r.queue(idx)
		return
	}
	r.stats.BytesWritten += int64(s.n)
	r.prefix.add(s.rel, int64(s.n))
	r.stats.Contiguous = r.prefix.end
	if p := r.job.Progress; p != nil {
		p.Written.Add(int64(s.n))
	}
	r.release(idx)
}

// advance accounts n bytes moved by the slot's request. It reports false
// when the request moved nothing that can be built on: a short O_DIRECT
// transfer below one alignment unit cannot be resumed from where it ended.
func (r *run) advance(s *slot, n, alignment int) bool {
	done := s.start + n
	if done >= s.n {
		s.done = s.n
		return true
	}
	if alignment > 1 {
		done -= done % alignment
	}
	if done <= s.start {
		return false
	}
	s.done = done
	return true
}

func (r *run) fail(err error) {
	if r.failed == nil {
		r.failed = err
	}
}

func (r *run) opError(s *slot, err error) error {
	op, file, off := "read", FileSrc, r.job.SrcOff
	if s.phase != phaseRead {
		op, file, off = "write", FileDst, r.job.DstOff
	}
	return &OpError{Op: op, Path: r.job.Files[file].Name(), Offset: off + s.rel + int64(s.start), Err: err}
}

// finish runs the fdatasync barrier after the last write completed, and
// picks the error to return.
func (r *run) finish() error {
	if err := r.truncate(); err != nil {
		return errors.Join(r.failed, err)
	}
	if r.failed != nil {
		return r.failed
	}
	if r.job.Sync {
		if err := r.sync(); err != nil {
			return err
		}
	}
	if r.canceled != nil {
		return &CanceledError{Written: r.stats.BytesWritten, Synced: r.stats.Synced, Err: r.canceled}
	}
	return nil
}

// truncate sets DST's size when the job asks for it: the full size after a
// complete copy, or only the part written without gaps after a stopped
// one, so that a file that is not a whole copy never looks like one.
func (r *run) truncate() error {
	if r.job.TruncateTo <= 0 {
		return nil
	}
	size := r.job.TruncateTo
	if r.stopping() {
		size = r.job.DstOff + r.prefix.end
	}
	dst := r.job.Files[FileDst]
	if err := unix.Ftruncate(int(dst.Fd()), size); err != nil {
		return &OpError{Op: "truncate", Path: dst.Name(), Offset: size, Err: err}
	}
	return nil
}

func (r *run) sync() error {
	r.pending = append(r.pending, Request{Op: OpSync, File: FileDst, Slot: SyncSlot})
	if err := r.submit(); err != nil {
		return err
	}
	for r.inflight > 0 {
		n, err := r.be.Reap(r.cqes, 1)
		if err != nil {
			return err
		}
		for _, c := range r.cqes[:n] {
			r.inflight--
			r.complete(c)
		}
	}
	return r.failed
}

func (r *run) syncDone(c Completion) {
	if c.Errno != 0 {
		r.fail(&OpError{Op: "fdatasync", Path: r.job.Files[FileDst].Name(), Offset: r.job.DstOff, Err: c.Errno})
		return
	}
	r.stats.Synced = true
}

// CanceledError reports a copy stopped by its context: what was written and
// whether it was synced. It unwraps to context.Canceled or the like.
type CanceledError struct {
	Written int64
	Synced  bool
	Err     error
}

func (e *CanceledError) Error() string {
	state := "not synced"
	if e.Synced {
		state = "synced"
	}
	return fmt.Sprintf("copy interrupted after %d bytes written (%s): %v", e.Written, state, e.Err)
}

func (e *CanceledError) Unwrap() error { return e.Err }
