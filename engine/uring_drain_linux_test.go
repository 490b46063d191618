package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/internal/uringtest"
	"github.com/ringcp/ringcp/ring"
)

// foreignReaps is a real io_uring backend whose Reaps, from the from-th
// on, are made from another OS thread, which a SINGLE_ISSUER ring refuses
// (EEXIST): a real kernel failure, with real requests in flight.
type foreignReaps struct {
	Backend
	from, n int
}

func (f *foreignReaps) Reap(out []Completion, atLeast int, timeout time.Duration) (int, error) {
	if f.n++; f.n < f.from {
		return f.Backend.Reap(out, atLeast, timeout)
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result)
	go func() {
		runtime.LockOSThread() // a thread of its own, never the issuer's
		n, err := f.Backend.Reap(out, atLeast, timeout)
		done <- result{n, err}
	}()
	r := <-done
	return r.n, r.err
}

// TestDeadRingIsUndrained: a ring that fails while a read is in flight in
// the kernel (SRC is a pipe with nothing to read yet) cannot be drained.
// Run reports ErrUndrained wrapping the kernel's error, Close leaves the
// ring, its registered buffers and files alone, and the read is still
// alive after Run returned: once the pipe has data, the kernel fills the
// copy's buffer with it. Had the buffers been freed (as before: Run
// returned without draining and the caller unmapped them), that write
// would have gone to freed memory.
func TestDeadRingIsUndrained(t *testing.T) {
	uringtest.NeedOn(t)
	const bs = 64 << 10
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	dst, err := os.Create(filepath.Join(t.TempDir(), "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	bufs, err := align.AllocBuffers(2, bs)
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Free() // only after the test drained the ring itself
	job := Job{BlockSize: bs, Buffers: bufs.Slots, SrcAlign: 1, DstAlign: 1, Sync: true, Length: 4 * bs}
	job.Files[FileSrc], job.Files[FileDst] = pr, dst
	first := bytes.Repeat([]byte{'a'}, bs)
	if _, err := pw.Write(first); err != nil { // one read completes, the other waits
		t.Fatal(err)
	}
	var be *foreignReaps
	c, err := Open(job, func(s Setup) (Backend, error) {
		inner, err := NewUring(s)
		be = &foreignReaps{Backend: inner, from: 2}
		return be, err
	})
	if err != nil {
		t.Fatal(err)
	}
	ub := be.Backend.(*uringBackend)
	st, err := c.Run(context.Background())
	if !errors.Is(err, ErrUndrained) || !errors.Is(err, ring.ErrWrongThread) {
		t.Fatalf("err = %v, want ErrUndrained wrapping ring.ErrWrongThread", err)
	}
	if st.InFlight != 2 || !c.Undrained() {
		t.Fatalf("stats %+v, Undrained %v: want 2 in flight (the waiting read, the write not sent)", st, c.Undrained())
	}
	// Locked once more, so the goroutine stays on the issuer's thread
	// after Close unlocks Open's lock.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := c.Close(); !errors.Is(err, ErrUndrained) {
		t.Fatalf("Close = %v, want the undrained error again", err)
	}
	info := ringInfo(t, ub.r.Fd())
	if !strings.Contains(info, "UserBufs:\t2") || !strings.Contains(info, "UserFiles:\t2") {
		t.Fatalf("the ring's buffers or files were released while a read was in flight:\n%s", info)
	}
	second := bytes.Repeat([]byte{'b'}, bs)
	if _, err := pw.Write(second); err != nil {
		t.Fatal(err)
	}
	got := drainAll(t, ub, 2)
	filled := bytes.Equal(bufs.Slots[0][:bs], second) || bytes.Equal(bufs.Slots[1][:bs], second)
	if !filled || got[0].Errno != 0 {
		t.Fatalf("completions %+v: want the read alive after Run returned, filling a buffer with the pipe's new data", got)
	}
	if err := ub.Close(); err != nil {
		t.Fatal(err)
	}
}

// drainAll reaps n completions from the issuer's thread.
func drainAll(t *testing.T, b Backend, n int) []Completion {
	t.Helper()
	var got []Completion
	out := make([]Completion, 4)
	for len(got) < n {
		k, err := b.Reap(out, 1, 10*time.Second)
		if err != nil {
			t.Fatalf("reaping what Run left in flight: %v", err)
		}
		if k == 0 {
			t.Fatalf("only %d of %d completions came within 10s", len(got), n)
		}
		got = append(got, out[:k]...)
	}
	return got
}

func ringInfo(t *testing.T, fd int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		t.Fatalf("the ring's descriptor is gone: %v", err)
	}
	return string(b)
}

// TestLostCompletionsKillTheRing: after EBADR (completions dropped) the
// backend cannot count what is in flight, and a wait for completions that
// will never come would last forever: every later call fails at once, so
// the engine reports the copy undrained instead of hanging.
func TestLostCompletionsKillTheRing(t *testing.T) {
	b := &uringBackend{} // no ring: any use of it would panic
	b.died(fmt.Errorf("io_uring_enter: %w", ring.ErrCQLost))
	if _, err := b.Reap(make([]Completion, 1), 1, 0); !errors.Is(err, ring.ErrCQLost) {
		t.Fatalf("Reap after EBADR = %v, want ErrCQLost at once", err)
	}
	if n, err := b.Submit([]Request{{Op: OpSync}}); n != 0 || !errors.Is(err, ring.ErrCQLost) {
		t.Fatalf("Submit after EBADR = %d, %v, want 0 taken and ErrCQLost", n, err)
	}
	b2 := &uringBackend{}
	b2.died(ring.ErrWrongThread) // passes: the right thread can still drain
	if b2.dead != nil {
		t.Fatal("a wrong-thread error marked the ring dead")
	}
}
