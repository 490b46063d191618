package ring

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Options shape a ring. The zero value asks for nothing optional.
type Options struct {
	// Flags are setup flags to try. Optional ones the kernel rejects with
	// EINVAL are dropped one group at a time, in dropOrder.
	Flags SetupFlags
	// Require lists flags that must be granted; Setup fails rather than
	// drop them.
	Require SetupFlags
	// CQEntries sizes the CQ ring (FlagCQSize is added when nonzero);
	// otherwise the kernel makes it twice the SQ.
	CQEntries uint32
}

// Ring is one io_uring instance and its mappings. See the package doc for
// the thread and buffer rules.
type Ring struct {
	fd       int
	flags    SetupFlags
	features Features
	sq       submissionQueue
	cq       completionQueue
	maps     []mapping
	stats    counters
	wait     waitArg
	closed   bool
}

type mapping struct {
	addr unsafe.Pointer
	size uintptr
}

// counters let the ring know whether anything is in flight, which decides
// whether waiting can make progress (see enter_linux.go).
type counters struct {
	submitted uint64
	reaped    uint64
}

// dropOrder is the order optional flags are given up on EINVAL, newest
// first, as fio does: DEFER_TASKRUN (6.1), SINGLE_ISSUER (6.0), the
// COOP_TASKRUN pair (5.19), CLAMP (5.6), CQSIZE (5.5).
var dropOrder = []SetupFlags{
	FlagDeferTaskrun,
	FlagSingleIssuer,
	FlagCoopTaskrun | FlagTaskrunFlag,
	FlagClamp,
	FlagCQSize,
}

// Setup creates a ring with at least entries SQ entries (rounded up to a
// power of two by the kernel). It returns an *UnavailableError when io_uring
// cannot be used here. With FlagSingleIssuer the calling goroutine must have
// called runtime.LockOSThread.
func Setup(entries uint32, opts *Options) (*Ring, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if entries == 0 || entries > maxEntries {
		return nil, fmt.Errorf("io_uring_setup: %d entries: %w", entries, syscall.EINVAL)
	}
	if o.CQEntries != 0 {
		o.Flags |= FlagCQSize
	}
	fd, p, err := setupWithFallback(entries, o)
	if err != nil {
		return nil, err
	}
	r := &Ring{fd: fd, flags: SetupFlags(p.Flags), features: Features(p.Features)}
	if err := r.mapRings(p); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// setupWithFallback calls io_uring_setup, dropping optional flags one group
// at a time while the kernel answers EINVAL.
func setupWithFallback(entries uint32, o Options) (int, *params, error) {
	flags := o.Flags
	next := 0
	for {
		p := &params{Flags: uint32(flags)}
		if flags&FlagCQSize != 0 {
			p.CQEntries = o.CQEntries
		}
		fd, errno := setupSyscall(entries, p)
		if errno == 0 {
			return fd, p, nil
		}
		if errno != syscall.EINVAL {
			return -1, nil, classifySetupErr(errno)
		}
		var dropped bool
		flags, next, dropped = dropNext(flags, o.Require, next)
		if !dropped {
			return -1, nil, fmt.Errorf("io_uring_setup flags %#x: %w", uint32(flags), errno)
		}
	}
}

// dropNext removes the next optional group present in flags and not required.
func dropNext(flags, required SetupFlags, from int) (SetupFlags, int, bool) {
	for i := from; i < len(dropOrder); i++ {
		g := dropOrder[i] &^ required
		if flags&g != 0 {
			return flags &^ g, i + 1, true
		}
	}
	return flags, len(dropOrder), false
}

// classifySetupErr turns an io_uring_setup errno into an *UnavailableError
// when it means "not here", and leaves real faults (EFAULT...) alone.
func classifySetupErr(errno syscall.Errno) error {
	var cause error
	switch errno {
	case syscall.ENOSYS:
		cause = ErrNotInKernel
	case syscall.EPERM:
		cause = ErrDisabled
	case syscall.ENOMEM:
		cause = ErrNoLockedMemory
	default:
		return fmt.Errorf("io_uring_setup: %w", errno)
	}
	return &UnavailableError{Cause: cause, Errno: errno, Detail: explain(errno)}
}

// mapRings maps the SQ and CQ rings (once with FEAT_SINGLE_MMAP, 5.4+) and
// the SQE array, reading every position from the offsets in p.
func (r *Ring) mapRings(p *params) error {
	sqSize := uintptr(p.SQOff.Array) + 4*uintptr(p.SQEntries)
	cqSize := uintptr(p.CQOff.CQEs) + cqeSize*uintptr(p.CQEntries)
	single := r.features&FeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	sqPtr, err := r.mmap(mmapOffSQRing, sqSize)
	if err != nil {
		return err
	}
	cqPtr := sqPtr
	if !single {
		if cqPtr, err = r.mmap(mmapOffCQRing, cqSize); err != nil {
			return err
		}
	}
	sqes, err := r.mmap(mmapOffSQEs, sqeSize*uintptr(p.SQEntries))
	if err != nil {
		return err
	}
	r.sq.init(sqPtr, sqes, &p.SQOff)
	r.cq.init(cqPtr, &p.CQOff)
	return nil
}

func (r *Ring) mmap(off int64, size uintptr) (unsafe.Pointer, error) {
	ptr, err := unix.MmapPtr(r.fd, off, nil, size,
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("io_uring mmap at %#x: %w", off, err)
	}
	r.maps = append(r.maps, mapping{ptr, size})
	return ptr, nil
}

// Close unmaps the rings and closes the fd. It is safe to call twice. Drain
// requests in flight first: their buffers may still be in use by the kernel.
func (r *Ring) Close() error {
	if r == nil || r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for _, m := range r.maps {
		errs = append(errs, unix.MunmapPtr(m.addr, m.size))
	}
	r.maps = nil
	if r.fd >= 0 {
		errs = append(errs, unix.Close(r.fd))
		r.fd = -1
	}
	return errors.Join(errs...)
}

// Fd is the ring's file descriptor.
func (r *Ring) Fd() int { return r.fd }

// Flags are the setup flags the kernel granted.
func (r *Ring) Flags() SetupFlags { return r.flags }

// Features are what the kernel reported it supports.
func (r *Ring) Features() Features { return r.features }

// SQEntries is the size of the submission queue.
func (r *Ring) SQEntries() uint32 { return r.sq.entries }

// CQEntries is the size of the completion queue.
func (r *Ring) CQEntries() uint32 { return r.cq.entries }

// InFlight is the number of submitted requests whose completions have not
// been reaped yet.
func (r *Ring) InFlight() uint64 { return r.stats.submitted - r.stats.reaped }

// String names the flags for logs, e.g. "DEFER_TASKRUN|SINGLE_ISSUER".
func (f SetupFlags) String() string {
	names := []struct {
		f SetupFlags
		n string
	}{
		{FlagCQSize, "CQSIZE"}, {FlagClamp, "CLAMP"},
		{FlagCoopTaskrun, "COOP_TASKRUN"}, {FlagTaskrunFlag, "TASKRUN_FLAG"},
		{FlagSingleIssuer, "SINGLE_ISSUER"}, {FlagDeferTaskrun, "DEFER_TASKRUN"},
	}
	s := ""
	for _, n := range names {
		if f&n.f != 0 {
			if s != "" {
				s += "|"
			}
			s += n.n
		}
	}
	if rest := f &^ flagKnownOptional; rest != 0 {
		if s != "" {
			s += "|"
		}
		s += fmt.Sprintf("%#x", uint32(rest))
	}
	if s == "" {
		return "none"
	}
	return s
}
