package engine

import (
	"errors"
	"fmt"
	"syscall"
)

// prefix tracks how far DST is complete without gaps from the range start:
// chunks finish out of order, and a stopped copy is cut back to this point
// so it never looks finished.
type prefix struct {
	end     int64
	pending map[int64]int64 // finished chunks past a gap: offset -> length
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

// finish sets DST's size and runs the fdatasync barrier after the last
// write completed, and picks the error to return. The barrier runs after a
// failure too: what a failed copy claims to have written (Contiguous) is
// only true once it is flushed. A buffered write (or a filesystem's
// buffered fallback for O_DIRECT, as ext4 does on block-mapped files) can
// complete and then fail in writeback; only fdatasync tells, and then
// Stats.Synced stays false.
func (r *run) finish() error {
	if r.broken {
		// The backend failed (and was drained): neither the barrier nor
		// anything else goes through it. DST is still cut back.
		return errors.Join(r.failed, r.setSize())
	}
	sizeErr := r.setSize()
	if r.job.Sync {
		if err := r.sync(); err != nil {
			return errors.Join(r.failed, sizeErr, err)
		}
	}
	if err := errors.Join(r.failed, sizeErr, r.syncErr); err != nil {
		return err
	}
	// A stop that came after the last chunk (during the barrier, say) did
	// not stop anything: the copy is complete, and synced if asked.
	complete := r.prefix.end == r.job.Length && (r.stats.Synced || !r.job.Sync)
	if r.canceled != nil && !complete {
		return &CanceledError{Written: r.stats.BytesWritten, Contiguous: r.stats.Contiguous, Synced: r.stats.Synced,
			Read: r.stats.BytesRead, Pass: r.job.Check != nil, Err: r.canceled}
	}
	return nil
}

// setSize gives DST its final size after a complete copy, or cuts it back to
// the part written without gaps after a stopped one, so that a file that is
// not a whole copy never looks like one.
func (r *run) setSize() error {
	size := r.job.FinalSize
	if r.stopping() {
		if !r.job.CutBackOnStop {
			return nil
		}
		size = r.job.DstOff + r.prefix.end
	}
	if size <= 0 && !r.stopping() {
		return nil
	}
	dst := r.job.end(FileDst)
	if err := dst.Truncate(size); err != nil {
		return &OpError{Op: "truncate", Path: dst.Name(), Offset: size, Err: err}
	}
	return nil
}

// sync is the barrier: fdatasync DST once every write has completed. The
// descriptor that wrote the unaligned tail is synced too: fsync is per
// inode on local filesystems, but a FUSE server may buffer per handle.
func (r *run) sync() error {
	r.job.setPhase(PhaseSync)
	r.pending = append(r.pending, syncRequest(SyncSlot))
	if r.tailWritten {
		r.pending = append(r.pending, syncRequest(SyncTailSlot))
	}
	r.syncsLeft = len(r.pending)
	return r.pump(false)
}

func syncRequest(slot int) Request {
	file := FileDst
	if slot == SyncTailSlot {
		file = FileDstTail
	}
	return Request{Op: OpSync, File: file, Slot: slot}
}

func (r *run) syncDone(c Completion) {
	if c.Slot == SyncPeriodicSlot && c.Errno != syscall.EAGAIN && c.Errno != syscall.EINTR {
		r.periodicDone(c)
		return
	}
	switch c.Errno {
	case 0:
		r.progressed(c.Slot)
		r.syncsLeft--
		r.stats.Synced = r.syncsLeft == 0 && !r.syncLost && r.syncErr == nil
		if r.stats.Synced {
			r.madeDurable(r.prefix.end)
		}
	case syscall.EAGAIN, syscall.EINTR:
		// Not expected from io_uring's fsync workers, but it means "again",
		// never "failed": sent again after a backoff, within limits.
		r.retry(c.Slot, c.Errno)
	default:
		r.syncsLeft--
		r.stats.Synced = false
		if r.syncErr == nil {
			r.syncErr = r.slotError(c.Slot, c.Errno)
		}
	}
}

// CanceledError reports a copy stopped by its context: what was written,
// how much of the range is complete without gaps, and whether it was
// synced; or, for a read pass (Pass), what was read and how much of the
// range was checked without gaps (Contiguous). It unwraps to
// context.Canceled or the like.
type CanceledError struct {
	Written    int64
	Contiguous int64
	Synced     bool
	Read       int64
	// Pass: a read pass (Job.Check) was stopped, which writes nothing.
	Pass bool
	Err  error
}

func (e *CanceledError) Error() string {
	if e.Pass {
		return fmt.Sprintf("read pass interrupted after %d bytes read, the first %d checked: %v", e.Read, e.Contiguous, e.Err)
	}
	state := "not synced"
	if e.Synced {
		state = "synced"
	}
	return fmt.Sprintf("copy interrupted after %d bytes written, the first %d complete (%s): %v",
		e.Written, e.Contiguous, state, e.Err)
}

func (e *CanceledError) Unwrap() error { return e.Err }
