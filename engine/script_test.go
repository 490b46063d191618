package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/align"
	"golang.org/x/sys/unix"
)

// scripted is a Backend that performs each request at once with a plain
// system call, unless its script answers the request itself. An answer
// can be held back: held completions are handed out only when nothing
// else is ready, so a test can make one request finish after everything
// else has.
type scripted struct {
	fds    Fds
	script func(q Request) (c Completion, answered, hold bool)
	ready  []Completion
	held   []Completion
	reqs   []Request // every request submitted, in order
	// failSubmit, when it returns an error for a request, makes Submit
	// stop there and report the requests before it as taken.
	failSubmit func(q Request) error
	// failReap, when it returns an error for the n-th call (from 1),
	// makes that Reap fail without handing anything out.
	failReap func(n int) error
	reaps    int
	timeouts []time.Duration // of every Reap
	closed   bool
}

func newScripted(script func(q Request) (Completion, bool, bool)) NewBackend {
	return func(s Setup) (Backend, error) {
		return &scripted{script: script, fds: s.Files.Fds()}, nil
	}
}

func (b *scripted) Name() string { return "scripted" }
func (b *scripted) Caps() Caps   { return Caps{} }
func (b *scripted) Close() error { b.closed = true; return nil }

// inFlight is how many requests were taken and not handed out.
func (b *scripted) inFlight() int { return len(b.ready) + len(b.held) }

func (b *scripted) Submit(reqs []Request) (int, error) {
	for i, q := range reqs {
		if b.failSubmit != nil {
			if err := b.failSubmit(q); err != nil {
				return i, err
			}
		}
		b.reqs = append(b.reqs, q)
		if b.script != nil {
			if c, ok, hold := b.script(q); ok {
				if hold {
					b.held = append(b.held, c)
				} else {
					b.ready = append(b.ready, c)
				}
				continue
			}
		}
		b.ready = append(b.ready, b.do(q))
	}
	return len(reqs), nil
}

func (b *scripted) do(q Request) Completion {
	fd := b.fds[q.File]
	var n int
	var err error
	switch q.Op {
	case OpRead:
		n, err = unix.Pread(fd, q.Buf, q.Off)
	case OpWrite:
		n, err = unix.Pwrite(fd, q.Buf, q.Off)
	case OpSync:
		err = unix.Fdatasync(fd)
	case OpFallocate:
		err = unix.Fallocate(fd, q.Mode, q.Off, q.Len)
	}
	c := Completion{Slot: q.Slot, N: max(n, 0)}
	if err != nil {
		c.Errno = err.(syscall.Errno)
	}
	return c
}

func (b *scripted) Reap(out []Completion, atLeast int, timeout time.Duration) (int, error) {
	b.reaps++
	b.timeouts = append(b.timeouts, timeout)
	if b.failReap != nil {
		if err := b.failReap(b.reaps); err != nil {
			return 0, err
		}
	}
	if len(b.ready) == 0 && len(b.held) > 0 {
		b.ready, b.held = b.held[:1], b.held[1:]
	}
	n := copy(out, b.ready)
	b.ready = b.ready[n:]
	return n, nil
}

// scriptJob copies src into an existing dst through the scripted backend.
func scriptJob(t *testing.T, src, old []byte, bs, depth int) (Job, string, func()) {
	t.Helper()
	dir := t.TempDir()
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.WriteFile(srcPath, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dstPath, old, 0o644); err != nil {
		t.Fatal(err)
	}
	sf, err := os.Open(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	df, err := os.OpenFile(dstPath, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	bufs, err := align.AllocBuffers(depth, bs)
	if err != nil {
		t.Fatal(err)
	}
	job := Job{BlockSize: bs, Buffers: bufs.Slots, SrcAlign: 1, DstAlign: 1, Sync: true, Length: int64(len(src))}
	job.Files[FileSrc], job.Files[FileDst] = sf, df
	return job, dstPath, func() { sf.Close(); df.Close(); bufs.Free() }
}

func pattern(n int, b byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = b + byte(i%251)
	}
	return p
}

// TestZeroOpRetriedAfterMethodsRanOut: a fallocate that makes a zero run
// zero comes back -EAGAIN after the other slots found that neither punch
// nor zero range works here. Its retry must not go out as fallocate mode 0,
// which allocates and leaves DST's old bytes where zeros belong.
func TestZeroOpRetriedAfterMethodsRanOut(t *testing.T) {
	const bs = 4096
	src := make([]byte, 4*bs) // zeros: one zero run per chunk
	old := pattern(len(src), 1)
	job, dstPath, cleanup := scriptJob(t, src, old, bs, 2)
	defer cleanup()
	job.ZeroBlock = bs
	first := true
	script := func(q Request) (Completion, bool, bool) {
		if q.Op != OpFallocate || q.Mode&(unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_ZERO_RANGE) == 0 {
			return Completion{}, false, false
		}
		if first {
			first = false
			return Completion{Slot: q.Slot, Errno: syscall.EAGAIN}, true, true
		}
		return Completion{Slot: q.Slot, Errno: syscall.EOPNOTSUPP}, true, false
	}
	be := newScripted(script)
	var seen *scripted
	st, err := Run(context.Background(), job, func(s Setup) (Backend, error) {
		b, err := be(s)
		seen = b.(*scripted)
		return b, err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range seen.reqs {
		if q.Op == OpFallocate && q.Mode&(unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_ZERO_RANGE) == 0 {
			t.Errorf("fallocate mode %#x at %d: a zero run sent as plain allocation", q.Mode, q.Off)
		}
	}
	got, err := os.ReadFile(dstPath)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != 0 {
			t.Fatalf("DST byte %d is %#x, want 0: old data left in a zero run (stats %+v)", i, got[i], st)
		}
	}
	if st.BytesZeroed != int64(len(src)) {
		t.Errorf("zeroed %d bytes, want %d", st.BytesZeroed, len(src))
	}
}

// TestStaleRefusalKeepsNextMethod: two slots' punches are refused together.
// The second refusal comes back after punch was already turned off and
// must not turn off zero range too, which works here.
func TestStaleRefusalKeepsNextMethod(t *testing.T) {
	const bs = 4096
	src := make([]byte, 4*bs)
	job, dstPath, cleanup := scriptJob(t, src, pattern(len(src), 1), bs, 2)
	defer cleanup()
	job.ZeroBlock = bs
	var seen *scripted
	st, err := Run(context.Background(), job, func(s Setup) (Backend, error) {
		b, err := newScripted(func(q Request) (Completion, bool, bool) {
			if q.Op == OpFallocate && q.Mode&unix.FALLOC_FL_PUNCH_HOLE != 0 {
				return Completion{Slot: q.Slot, Errno: syscall.EOPNOTSUPP}, true, false
			}
			return Completion{}, false, false
		})(s)
		seen = b.(*scripted)
		return b, err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range seen.reqs {
		if q.Op == OpWrite {
			t.Fatalf("zeros written at %d: zero range was given up without being tried", q.Off)
		}
	}
	enginetestCompare(t, dstPath, src)
	if st.BytesZeroed != int64(len(src)) {
		t.Errorf("zeroed %d bytes, want %d", st.BytesZeroed, len(src))
	}
}

func enginetestCompare(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("DST differs from what was copied")
	}
}

// TestStopEndsHoleZeroWrites: a hole chunk (up to 1 GiB) written as zeros
// a block at a time, where no fallocate works, stops at the next block
// once the copy is cancelled, as reads do: it is not part of the prefix,
// and finishing it could take a gigabyte of writes per slot.
func TestStopEndsHoleZeroWrites(t *testing.T) {
	const bs, hole = 64 << 10, 64 << 20
	job, _, cleanup := scriptJob(t, nil, pattern(hole, 1), bs, 2)
	defer cleanup()
	if err := os.Truncate(job.Files[FileSrc].Name(), hole); err != nil { // all hole
		t.Fatal(err)
	}
	job.Length, job.MapHoles = hole, true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	writes, afterCancel := 0, 0
	script := func(q Request) (Completion, bool, bool) {
		switch {
		case q.Op == OpFallocate:
			return Completion{Slot: q.Slot, Errno: syscall.EOPNOTSUPP}, true, false
		case q.Op == OpWrite:
			if writes++; writes == 2 {
				cancel()
			} else if writes > 2 {
				afterCancel++
			}
		}
		return Completion{}, false, false
	}
	_, err := Run(ctx, job, newScripted(script))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a cancelled copy", err)
	}
	if afterCancel > len(job.Buffers) {
		t.Fatalf("%d writes of zeros after the cancel: the hole chunk went on to its end", afterCancel)
	}
}

// TestSyncRetriesAndCoversTail: an fdatasync that comes back -EINTR is sent
// again rather than failing the copy, and a copy whose unaligned tail went
// through the buffered descriptor syncs that descriptor too.
func TestSyncRetriesAndCoversTail(t *testing.T) {
	src := pattern(10_000, 3)
	job, dstPath, cleanup := scriptJob(t, src, nil, 4096, 2)
	defer cleanup()
	tail, err := os.OpenFile(dstPath, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tail.Close()
	job.Files[FileDstTail], job.DstAlign = tail, 512 // 10000 is not a multiple of 512
	var synced []FileID
	interrupted := false
	st, err := Run(context.Background(), job, newScripted(func(q Request) (Completion, bool, bool) {
		if q.Op != OpSync {
			return Completion{}, false, false
		}
		if !interrupted {
			interrupted = true
			return Completion{Slot: q.Slot, Errno: syscall.EINTR}, true, false
		}
		synced = append(synced, q.File)
		return Completion{Slot: q.Slot}, true, false
	}))
	if err != nil || !st.Synced {
		t.Fatalf("stats %+v, err %v: want a synced copy", st, err)
	}
	if !slices.Contains(synced, FileDst) || !slices.Contains(synced, FileDstTail) {
		t.Fatalf("synced %v: want DST and the tail's descriptor", synced)
	}
	enginetestCompare(t, dstPath, src)
}
