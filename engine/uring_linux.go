package engine

import (
	"errors"
	"fmt"
	"math/bits"
	"syscall"

	"github.com/ringcp/ringcp/ring"
	"golang.org/x/sys/unix"
)

// uringBackend drives one ring from the engine's locked thread. Submit only
// fills SQEs; Reap submits and waits in one io_uring_enter.
type uringBackend struct {
	r          *ring.Ring
	fds        [numFiles]int32
	fixedFiles bool
	fixedBufs  bool
	vectored   bool         // kernel < 5.6: READV/WRITEV instead of READ/WRITE
	iovs       []unix.Iovec // one per slot when vectored; alive until reaped
	cqes       []ring.CQE
	notes      []string
}

var _ Backend = (*uringBackend)(nil)

// ringFlags are tried in order of preference and dropped by ring.Setup where
// the kernel lacks them. DEFER_TASKRUN runs completion work only inside our
// own io_uring_enter, on our thread: no interrupts of the submitter.
const ringFlags = ring.FlagSingleIssuer | ring.FlagDeferTaskrun | ring.FlagTaskrunFlag | ring.FlagCoopTaskrun

// NewUring builds the io_uring backend. It returns an error matching
// ring.ErrUnavailable when io_uring cannot be used here, so the caller can
// fall back to the pool.
func NewUring(s Setup) (Backend, error) {
	// Depth data requests plus one fdatasync are in flight at most; the CQ
	// is twice the SQ, so completions never overflow.
	entries := uint32(1) << bits.Len32(uint32(s.Depth))
	r, err := ring.Setup(entries, &ring.Options{Flags: ringFlags})
	if err != nil {
		return nil, err
	}
	b := &uringBackend{r: r, cqes: make([]ring.CQE, s.Depth+1)}
	b.notes = append(b.notes, "ring flags "+r.Flags().String())
	if err := b.chooseOps(); err != nil {
		r.Close()
		return nil, err
	}
	b.registerFiles(s.Files)
	b.registerBuffers(s.Buffers)
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
	case errors.Is(err, syscall.EINVAL):
		b.vectored = true // no REGISTER_PROBE: a kernel older than 5.6
	case err != nil:
		return err
	default:
		b.vectored = !p.Supports(ring.OpRead) || !p.Supports(ring.OpWrite)
	}
	if b.vectored {
		b.notes = append(b.notes, "READV/WRITEV (no READ/WRITE opcodes)")
	}
	return nil
}

// registerFiles saves an fget/fput per request; failure only costs that.
func (b *uringBackend) registerFiles(files Files) {
	var fds []int32
	for i, f := range files {
		b.fds[i] = -1
		if f != nil {
			b.fds[i] = int32(f.Fd())
			fds = append(fds, b.fds[i])
		}
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
func (b *uringBackend) registerBuffers(bufs [][]byte) {
	if b.vectored {
		b.iovs = make([]unix.Iovec, len(bufs))
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

func (b *uringBackend) Submit(reqs []Request) error {
	for i := range reqs {
		sqe := b.r.GetSQE()
		if sqe == nil {
			return fmt.Errorf("io_uring: SQ full with %d entries", b.r.SQEntries())
		}
		b.prep(sqe, &reqs[i])
	}
	return nil
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
	if b.fixedFiles {
		sqe.Flags |= ring.SQEFixedFile
	}
	sqe.UserData = uint64(int64(q.Slot))
}

func (b *uringBackend) Reap(out []Completion, atLeast int) (int, error) {
	if _, err := b.r.SubmitAndWait(uint32(atLeast)); err != nil {
		return 0, err
	}
	n, err := b.r.PeekBatch(b.cqes[:min(len(out), len(b.cqes))])
	if err != nil {
		return 0, err
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

// Close unregisters the fixed files before it closes the ring. A closed
// ring is torn down later by a kernel worker (io_ring_exit_work), and the
// files it holds until then keep DST's and SRC's file systems busy: an
// umount right after the copy failed with EBUSY. Unregistering puts them
// before it returns; nothing is in flight any more (Backend contract).
func (b *uringBackend) Close() error {
	var err error
	if b.fixedFiles {
		err = b.r.UnregisterFiles()
	}
	return errors.Join(err, b.r.Close())
}
