package engine

import (
	"errors"
	"fmt"
	"math/bits"
	"syscall"
	"time"

	"github.com/ringcp/ringcp/ring"
	"golang.org/x/sys/unix"
)

// uringBackend drives one ring from the engine's locked thread. Submit only
// fills SQEs; Reap submits and waits in one io_uring_enter.
type uringBackend struct {
	r          *ring.Ring
	fds        [NumFiles]int32
	fixedFiles bool
	fixedBufs  bool
	vectored   bool         // kernel < 5.6: READV/WRITEV instead of READ/WRITE
	iovs       []unix.Iovec // one per slot when vectored; alive until reaped
	cqes       []ring.CQE
	notes      []string
	dead       error  // see died
	ioprio     IOPrio // sqe->ioprio of every read and write
	blocking   bool   // IOSQE_ASYNC on every read and write (Setup.Blocking)
}

var _ Backend = (*uringBackend)(nil)

// ringFlags are tried in order of preference and dropped by ring.Setup where
// the kernel lacks them. DEFER_TASKRUN runs completion work only inside our
// own io_uring_enter, on our thread: no interrupts of the submitter.
const ringFlags = ring.FlagSingleIssuer | ring.FlagDeferTaskrun | ring.FlagTaskrunFlag | ring.FlagCoopTaskrun

// UringOptions choose how the io_uring backend drives its ring. NewUring
// uses DefaultUringOptions, which picks the fastest path the kernel has;
// the other settings run the paths older kernels take (tests run the
// shared suite over all of them).
type UringOptions struct {
	// Flags are the ring setup flags asked for; ring.Setup drops those the
	// kernel lacks. 0 asks for none, as on kernels before 5.19.
	Flags ring.SetupFlags
	// NoFixedBuffers leaves the buffers unregistered (plain READ/WRITE),
	// as when RLIMIT_MEMLOCK refuses the registration.
	NoFixedBuffers bool
	// NoFixedFiles passes plain descriptors instead of registered ones.
	NoFixedFiles bool
	// Vectored uses READV/WRITEV, as on kernels before 5.6; there are no
	// fixed buffers then.
	Vectored bool
}

// DefaultUringOptions are NewUring's: every setup flag that helps, fixed
// buffers and files where the kernel takes them, READ/WRITE where it has
// them.
func DefaultUringOptions() UringOptions { return UringOptions{Flags: ringFlags} }

// NewUring builds the io_uring backend with DefaultUringOptions. It returns
// an error matching ring.ErrUnavailable when io_uring cannot be used here,
// so the caller can fall back to the pool.
func NewUring(s Setup) (Backend, error) { return newUring(s, DefaultUringOptions()) }

// NewUringWith returns a NewBackend that builds the io_uring backend with
// o, for tests and comparisons of the paths older kernels take.
func NewUringWith(o UringOptions) NewBackend {
	return func(s Setup) (Backend, error) { return newUring(s, o) }
}

func newUring(s Setup, o UringOptions) (Backend, error) {
	if err := s.DescriptorsOnly(); err != nil {
		return nil, fmt.Errorf("io_uring: %w", err)
	}
	// Depth data requests plus two fdatasyncs are in flight at most; the
	// SQ is the next power of two above Depth, the CQ twice the SQ, so
	// completions never overflow.
	entries := uint32(1) << bits.Len32(uint32(s.Depth))
	r, err := ring.Setup(entries, &ring.Options{Flags: o.Flags})
	if err != nil {
		return nil, err
	}
	b := &uringBackend{r: r, cqes: make([]ring.CQE, s.Depth+2), vectored: o.Vectored, ioprio: s.IOPrio, blocking: s.Blocking}
	b.notes = append(b.notes, "ring flags "+r.Flags().String())
	if s.IOPrio != 0 {
		b.notes = append(b.notes, "ioprio "+s.IOPrio.String())
	}
	if s.Blocking {
		b.notes = append(b.notes, "blocking submission (IOSQE_ASYNC)")
	}
	if err := b.chooseOps(); err != nil {
		r.Close()
		return nil, err
	}
	b.registerFiles(s.Files, !o.NoFixedFiles)
	b.registerBuffers(s.Buffers, !o.NoFixedBuffers)
	if b.fixedBufs {
		b.notes = append(b.notes, "fixed buffers")
	}
	if b.fixedFiles {
		b.notes = append(b.notes, "fixed files")
	}
	return b, nil
}

// chooseOps probes for READ/WRITE (5.6); older kernels get READV/WRITEV.
func (b *uringBackend) chooseOps() error {
	p, err := b.r.Probe()
	switch {
	case b.vectored: // asked for
	case errors.Is(err, syscall.EINVAL):
		b.vectored = true // no REGISTER_PROBE: a kernel older than 5.6
	case err != nil:
		return err
	default:
		b.vectored = !p.Supports(ring.OpRead) || !p.Supports(ring.OpWrite)
	}
	if b.vectored {
		b.notes = append(b.notes, "READV/WRITEV")
	}
	return nil
}

// registerFiles saves an fget/fput per request; failure only costs that.
func (b *uringBackend) registerFiles(files Files, try bool) {
	var fds []int32
	for i, fd := range files.Fds() {
		b.fds[i] = int32(fd)
		if fd >= 0 {
			fds = append(fds, int32(fd))
		}
	}
	if !try {
		return
	}
	if err := b.r.RegisterFiles(fds); err != nil {
		b.notes = append(b.notes, fmt.Sprintf("plain fds (%v)", err))
		return
	}
	n := int32(0)
	for i := range b.fds {
		if b.fds[i] >= 0 {
			b.fds[i] = n
			n++
		}
	}
	b.fixedFiles = true
}

// registerBuffers pins the slots once instead of per request. ENOMEM
// (RLIMIT_MEMLOCK without CAP_IPC_LOCK) leaves plain READ/WRITE.
func (b *uringBackend) registerBuffers(bufs [][]byte, try bool) {
	if b.vectored {
		b.iovs = make([]unix.Iovec, len(bufs))
		return
	}
	if !try {
		return
	}
	if err := b.r.RegisterBuffers(bufs); err != nil {
		b.notes = append(b.notes, fmt.Sprintf("unregistered buffers (%v)", err))
		return
	}
	b.fixedBufs = true
}

func (b *uringBackend) Name() string { return "io_uring" }

func (b *uringBackend) Caps() Caps {
	detail := ""
	for i, n := range b.notes {
		if i > 0 {
			detail += ", "
		}
		detail += n
	}
	return Caps{FixedBuffers: b.fixedBufs, FixedFiles: b.fixedFiles, Detail: detail}
}

// Submit only fills SQEs; Reap's io_uring_enter sends them. The SQ holds
// more than the engine ever has in flight, so a full SQ is a bug, reported
// with the count of requests that did get an SQE.
func (b *uringBackend) Submit(reqs []Request) (int, error) {
	if b.dead != nil {
		return 0, b.dead
	}
	for i := range reqs {
		sqe := b.r.GetSQE()
		if sqe == nil {
			return i, fmt.Errorf("io_uring: SQ full with %d entries", b.r.SQEntries())
		}
		b.prep(sqe, &reqs[i])
	}
	return len(reqs), nil
}

func (b *uringBackend) prep(sqe *ring.SQE, q *Request) {
	fd := b.fds[q.File]
	off := uint64(q.Off)
	switch {
	case q.Op == OpSync:
		sqe.PrepFsync(fd, ring.FsyncDatasync)
	case q.Op == OpFallocate:
		sqe.PrepFallocate(fd, q.Mode, off, uint64(q.Len))
	case b.vectored:
		iov := b.iovs[q.Slot : q.Slot+1]
		iov[0].Base = &q.Buf[0]
		iov[0].SetLen(len(q.Buf))
		if q.Op == OpRead {
			sqe.PrepReadv(fd, iov, off)
		} else {
			sqe.PrepWritev(fd, iov, off)
		}
	case b.fixedBufs && q.Op == OpRead:
		sqe.PrepReadFixed(fd, q.Buf, off, uint16(q.Slot))
	case b.fixedBufs:
		sqe.PrepWriteFixed(fd, q.Buf, off, uint16(q.Slot))
	case q.Op == OpRead:
		sqe.PrepRead(fd, q.Buf, off)
	default:
		sqe.PrepWrite(fd, q.Buf, off)
	}
	if q.Op == OpRead || q.Op == OpWrite {
		// The kernel checks it at prep (EINVAL for a bad class, EPERM
		// for rt without the capability) and carries it into the bio,
		// also when the request is punted to an io-wq worker. Syncs and
		// fallocates keep the thread's priority.
		sqe.IOPrio = uint16(b.ioprio)
		if b.blocking {
			sqe.Flags |= ring.SQEAsync
		}
	}
	if b.fixedFiles {
		sqe.Flags |= ring.SQEFixedFile
	}
	sqe.UserData = uint64(int64(q.Slot))
}

func (b *uringBackend) Reap(out []Completion, atLeast int, timeout time.Duration) (int, error) {
	if b.dead != nil {
		return 0, b.dead
	}
	var err error
	if timeout > 0 {
		_, err = b.r.SubmitAndWaitTimeout(uint32(atLeast), timeout)
	} else {
		_, err = b.r.SubmitAndWait(uint32(atLeast))
	}
	if err != nil {
		return 0, b.died(err)
	}
	n, err := b.r.PeekBatch(b.cqes[:min(len(out), len(b.cqes))])
	if err != nil {
		return 0, b.died(err)
	}
	for i, c := range b.cqes[:n] {
		out[i] = Completion{Slot: int(int64(c.UserData))}
		if c.Res < 0 {
			out[i].Errno = syscall.Errno(-c.Res)
		} else {
			out[i].N = int(c.Res)
		}
	}
	b.r.CQAdvance(n)
	return n, nil
}

// died keeps an error after which the ring can no longer account for its
// requests: with completions lost (EBADR), a wait for them could last
// forever, so every later call fails at once and the engine reports the
// copy undrained. Other errors may pass and are only returned.
func (b *uringBackend) died(err error) error {
	if errors.Is(err, ring.ErrCQLost) {
		b.dead = err
	}
	return err
}

// Close leaves nothing of the copy in the kernel that references SRC's or
// DST's file system: a closed ring is torn down later by a kernel worker
// (io_ring_exit_work), and whatever it still holds then keeps those file
// systems busy (umount right after the copy failed with EBUSY). So first
// the requests are freed (see iowq_linux.go: the io-wq workers are let go
// idle, then the work they deferred to this thread is run), then the fixed
// files are unregistered, on this thread, before the ring is closed.
// Nothing is in flight any more (Backend contract).
func (b *uringBackend) Close() error {
	waitIOWQIdle()
	err := b.r.RunDeferred()
	if b.fixedFiles {
		err = errors.Join(err, b.r.UnregisterFiles())
	}
	return errors.Join(err, b.r.Close())
}
