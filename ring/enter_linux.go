package ring

import (
	"fmt"
	"syscall"
	"time"
)

// Limits on waiting out EAGAIN when nothing is in flight to complete:
// the kernel is short of memory for request structs, which passes.
const (
	retryPause    = time.Millisecond
	retryAttempts = 1000
)

// enter calls io_uring_enter and handles the errnos that are not faults.
// want counts every ready completion, our backlog included. A wait bounded
// by arg (enterExtArg) that times out is not an error: the caller looks at
// the CQ.
func (r *Ring) enter(toSubmit, want, flags uint32, arg *getEventsArg) (int, error) {
	for attempt := 0; ; attempt++ {
		// The kernel counts only CQEs in the ring toward min_complete, and
		// relieve may have moved some to the backlog since the last try.
		kernelWant := want - min(want, uint32(len(r.cq.backlog)))
		n, errno := enterSyscall(r.fd, toSubmit, kernelWant, flags, arg)
		switch errno {
		case 0:
			r.stats.submitted += uint64(n)
			return n, nil
		case syscall.ETIME:
			// The timeout of a bounded wait passed with no completion;
			// a call that also submitted returns its count instead.
			return 0, nil
		case syscall.EINTR:
			// Go preempts threads with SIGURG. EINTR means nothing was
			// submitted (a call that submitted returns the count), so
			// retrying the same call is exact.
			continue
		case syscall.EAGAIN, syscall.EBUSY:
			// The kernel cannot take more until completions are consumed
			// (CQ overflow backlog) or it has memory again: make room by
			// moving ready CQEs to our backlog, then retry.
			if attempt >= retryAttempts {
				return 0, fmt.Errorf("io_uring_enter: still busy after %d tries: %w", attempt, errno)
			}
			if err := r.relieve(); err != nil {
				return 0, err
			}
		case syscall.EBADR:
			return 0, ErrCQLost
		case syscall.EEXIST:
			return 0, ErrWrongThread
		default:
			return 0, fmt.Errorf("io_uring_enter: %w", errno)
		}
	}
}

// relieve frees CQ space after EBUSY/EAGAIN: it stashes ready completions;
// if there were none, it waits for one when something is in flight, or
// pauses briefly when nothing is.
func (r *Ring) relieve() error {
	if r.cq.stash() > 0 {
		return nil
	}
	if r.InFlight() == uint64(len(r.cq.backlog)) {
		time.Sleep(retryPause)
		return nil
	}
	_, errno := enterSyscall(r.fd, 0, 1, enterGetEvents, nil)
	switch errno {
	case 0, syscall.EINTR, syscall.EAGAIN, syscall.EBUSY:
		r.cq.stash()
		return nil
	case syscall.EBADR:
		return ErrCQLost
	case syscall.EEXIST:
		return ErrWrongThread
	default:
		return fmt.Errorf("io_uring_enter: %w", errno)
	}
}

var errClosed = fmt.Errorf("io_uring: ring closed: %w", syscall.EBADF)

func errWouldHang(want uint32, possible uint64) error {
	return fmt.Errorf("io_uring: waiting for %d completions with only %d possible: %w",
		want, possible, syscall.EINVAL)
}
