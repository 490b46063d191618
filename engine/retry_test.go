package engine

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// withPolicy runs a test with smaller retry limits, so a request that
// never succeeds is given up in milliseconds rather than seconds.
func withPolicy(t *testing.T, p retryPolicy) {
	old := defaultRetry
	defaultRetry = p
	t.Cleanup(func() { defaultRetry = old })
}

// runScripted runs job through b and returns what Run and b saw.
func runScripted(ctx context.Context, job Job, b *scripted) (Stats, error) {
	return Run(ctx, job, func(s Setup) (Backend, error) {
		for i, f := range s.Files {
			b.fds[i] = -1
			if f != nil {
				b.fds[i] = int(f.Fd())
			}
		}
		return b, nil
	})
}

func writesAt(b *scripted, off int64) int {
	n := 0
	for _, q := range b.reqs {
		if q.Op == OpWrite && q.Off == off {
			n++
		}
	}
	return n
}

// TestWriteAgainForeverGivesUp: a write that comes back -EAGAIN every time
// fails the copy after the retry limit, with an error naming the write,
// DST, the offset and EAGAIN, instead of being sent again forever.
func TestWriteAgainForeverGivesUp(t *testing.T) {
	withPolicy(t, retryPolicy{first: time.Millisecond, most: 4 * time.Millisecond, tries: 6, noProgress: time.Minute, grace: time.Second})
	src := pattern(4*4096, 7)
	job, dstPath, cleanup := scriptJob(t, src, nil, 4096, 2)
	defer cleanup()
	job.FinalSize, job.CutBackOnStop = int64(len(src)), true
	b := &scripted{script: func(q Request) (Completion, bool, bool) {
		if q.Op == OpWrite && q.Off == 8192 {
			return Completion{Slot: q.Slot, Errno: syscall.EAGAIN}, true, false
		}
		return Completion{}, false, false
	}}
	st, err := runScripted(context.Background(), job, b)
	var oe *OpError
	var re *RetryError
	if !errors.As(err, &oe) || !errors.As(err, &re) || !errors.Is(err, syscall.EAGAIN) {
		t.Fatalf("err = %v, want an *OpError with a *RetryError wrapping EAGAIN", err)
	}
	if oe.Op != "write" || oe.Path != dstPath || oe.Offset != 8192 || re.Tries != 7 {
		t.Fatalf("error %q: want the write of %s at 8192 given up after 7 tries", err, dstPath)
	}
	if n := writesAt(b, 8192); n != 7 {
		t.Fatalf("the write was sent %d times, want 7", n)
	}
	if fi, _ := os.Stat(dstPath); fi.Size() != st.Contiguous || st.Contiguous != 8192 {
		t.Fatalf("DST is %d bytes, contiguous %d: want both 8192", fi.Size(), st.Contiguous)
	}
}

// TestWriteAgainWithoutProgressGivesUp: the other bound, time without
// progress, ends retries that the count alone would let go on.
func TestWriteAgainWithoutProgressGivesUp(t *testing.T) {
	withPolicy(t, retryPolicy{first: time.Millisecond, most: 2 * time.Millisecond, tries: 1 << 30, noProgress: 50 * time.Millisecond, grace: time.Second})
	src := pattern(4096, 7)
	job, _, cleanup := scriptJob(t, src, nil, 4096, 1)
	defer cleanup()
	b := &scripted{script: func(q Request) (Completion, bool, bool) {
		if q.Op == OpWrite {
			return Completion{Slot: q.Slot, Errno: syscall.EINTR}, true, false
		}
		return Completion{}, false, false
	}}
	_, err := runScripted(context.Background(), job, b)
	var re *RetryError
	if !errors.As(err, &re) || re.Errno != syscall.EINTR || re.Elapsed < 50*time.Millisecond {
		t.Fatalf("err = %v, want a *RetryError for EINTR after 50ms without progress", err)
	}
}

// TestCancelEndsWriteRetries: a copy cancelled while a write keeps coming
// back -EAGAIN ends with a *CanceledError once the grace has passed; the
// write is abandoned (its chunk stays out of the prefix), not retried up to
// the limit.
func TestCancelEndsWriteRetries(t *testing.T) {
	withPolicy(t, retryPolicy{first: time.Millisecond, most: 4 * time.Millisecond, tries: 1000, noProgress: time.Minute, grace: 20 * time.Millisecond})
	src := pattern(4*4096, 9)
	job, dstPath, cleanup := scriptJob(t, src, nil, 4096, 2)
	defer cleanup()
	job.FinalSize, job.CutBackOnStop = int64(len(src)), true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	again, afterCancel := 0, 0
	b := &scripted{script: func(q Request) (Completion, bool, bool) {
		if q.Op != OpWrite || q.Off != 0 {
			return Completion{}, false, false
		}
		if again++; again == 3 {
			cancel()
		} else if again > 3 {
			afterCancel++
		}
		return Completion{Slot: q.Slot, Errno: syscall.EAGAIN}, true, false
	}}
	st, err := runScripted(ctx, job, b)
	var ce *CanceledError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a *CanceledError", err)
	}
	var re *RetryError
	if errors.As(err, &re) || afterCancel > 30 {
		t.Fatalf("%d tries after the cancel (err %v): the retries went on toward the limit", afterCancel, err)
	}
	if st.Contiguous != 0 || !ce.Synced {
		t.Fatalf("stats %+v: the abandoned chunk at 0 must keep the prefix empty, and what was written is synced", st)
	}
	if fi, _ := os.Stat(dstPath); fi.Size() != 0 {
		t.Fatalf("DST is %d bytes, want it cut back to 0", fi.Size())
	}
}

// TestAgainThenSuccess: every kind of request (reads, writes, zero ops,
// the unaligned tail, the barrier) comes back -EAGAIN or -EINTR a few times
// before it goes through; the copy completes byte for byte. The engine
// waits for the retries' backoff in Reap's timeout while other requests
// are in flight, never by sleeping over their completions.
func TestAgainThenSuccess(t *testing.T) {
	src := pattern(6*4096+100, 5)
	copy(src[4096:8192], make([]byte, 4096)) // a zero run: a zero op
	job, dstPath, cleanup := scriptJob(t, src, pattern(len(src), 200), 4096, 3)
	defer cleanup()
	job.ZeroBlock, job.FinalSize, job.CutBackOnStop = 4096, int64(len(src)), true
	job.DstAlign = 512 // the last 100 bytes are a tail
	failures := map[[2]int64]int{}
	ops := map[Op]bool{}
	b := &scripted{script: func(q Request) (Completion, bool, bool) {
		key := [2]int64{int64(q.Op), q.Off}
		if failures[key] < 3 {
			failures[key]++
			ops[q.Op] = true
			errno := syscall.EAGAIN
			if failures[key] == 2 {
				errno = syscall.EINTR
			}
			// Held: handed out after the others, so it is in flight
			// while their retries wait.
			hold := q.Op == OpRead && q.Off == 8192
			return Completion{Slot: q.Slot, Errno: errno}, true, hold
		}
		return Completion{}, false, false
	}}
	st, err := runScripted(context.Background(), job, b)
	if err != nil || !st.Synced {
		t.Fatalf("stats %+v, err %v: want a synced copy", st, err)
	}
	for _, op := range []Op{OpRead, OpWrite, OpFallocate, OpSync} {
		if !ops[op] {
			t.Errorf("no %v was answered EAGAIN: the test does not cover it", op)
		}
	}
	enginetestCompare(t, dstPath, src)
	bounded := false
	for _, d := range b.timeouts {
		bounded = bounded || (d > 0 && d <= defaultRetry.most)
	}
	if !bounded {
		t.Fatalf("Reap timeouts %v: no wait was bounded by a retry's backoff", b.timeouts)
	}
}

func TestBackoffDoublesToCap(t *testing.T) {
	p := defaultRetry
	want := []time.Duration{1, 2, 4, 8, 16, 32, 64, 100, 100}
	for i, w := range want {
		if got := p.backoff(i + 1); got != w*time.Millisecond {
			t.Fatalf("backoff(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
}

// TestTailWaitsForRetries: the unaligned tail, written without O_DIRECT,
// starts only once no other write is left, counting the ones waiting for
// a retry: otherwise the page cache would hold a page an O_DIRECT write is
// still to change, and turning O_DIRECT off on DST would turn it off for
// that write too.
func TestTailWaitsForRetries(t *testing.T) {
	src := pattern(3*4096+100, 8)
	job, dstPath, cleanup := scriptJob(t, src, nil, 4096, 4)
	defer cleanup()
	job.DstAlign, job.FinalSize, job.CutBackOnStop = 512, int64(len(src)), true
	again := 0
	b := &scripted{script: func(q Request) (Completion, bool, bool) {
		if q.Op == OpWrite && q.Off == 0 && again < 4 {
			again++
			return Completion{Slot: q.Slot, Errno: syscall.EAGAIN}, true, false
		}
		return Completion{}, false, false
	}}
	if _, err := runScripted(context.Background(), job, b); err != nil {
		t.Fatal(err)
	}
	lastRetry, tail := -1, -1
	for i, q := range b.reqs {
		switch {
		case q.Op == OpWrite && q.Off == 0:
			lastRetry = i
		case q.Op == OpWrite && q.Off == 3*4096:
			tail = i
		}
	}
	if tail < lastRetry {
		t.Fatalf("the tail was written (request %d) before the retried write at 0 went through (request %d)", tail, lastRetry)
	}
	enginetestCompare(t, dstPath, src)
}
