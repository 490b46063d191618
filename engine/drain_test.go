package engine

import (
	"context"
	"errors"
	"os"
	"testing"
)

var errInjected = errors.New("injected backend failure")

// TestReapFailureDrains: a Reap that fails once, with requests in flight,
// does not make Run return at once: the rest is reaped first, so nothing
// the backend took is running when Run returns and the backend is closed.
// The copy fails with that error, and DST is cut back to the prefix.
func TestReapFailureDrains(t *testing.T) {
	src := pattern(16*4096, 3)
	job, dstPath, cleanup := scriptJob(t, src, nil, 4096, 4)
	defer cleanup()
	job.FinalSize, job.CutBackOnStop = int64(len(src)), true
	b := &scripted{failReap: func(n int) error {
		if n == 3 {
			return errInjected
		}
		return nil
	}}
	st, err := runScripted(context.Background(), job, b)
	if !errors.Is(err, errInjected) || errors.Is(err, ErrUndrained) {
		t.Fatalf("err = %v, want the injected error, drained", err)
	}
	if b.inFlight() != 0 || st.InFlight != 0 {
		t.Fatalf("%d requests still in the backend (stats say %d) when Run returned", b.inFlight(), st.InFlight)
	}
	if !b.closed {
		t.Fatal("a drained backend was not closed")
	}
	got, _ := os.ReadFile(dstPath)
	if int64(len(got)) != st.Contiguous {
		t.Fatalf("DST is %d bytes, contiguous %d", len(got), st.Contiguous)
	}
	enginetestCompare(t, dstPath, src[:len(got)])
}

// TestSubmitFailurePartWay: a Submit that takes some requests and fails
// on the next one: those it took are in flight and are reaped before Run
// returns; those it did not take are never counted.
func TestSubmitFailurePartWay(t *testing.T) {
	src := pattern(16*4096, 4)
	job, _, cleanup := scriptJob(t, src, nil, 4096, 4)
	defer cleanup()
	submitted := 0
	b := &scripted{failSubmit: func(Request) error {
		if submitted++; submitted == 3 {
			return errInjected
		}
		return nil
	}}
	st, err := runScripted(context.Background(), job, b)
	if !errors.Is(err, errInjected) || errors.Is(err, ErrUndrained) {
		t.Fatalf("err = %v, want the injected error, drained", err)
	}
	if len(b.reqs) != 2 || b.inFlight() != 0 || st.InFlight != 0 || !b.closed {
		t.Fatalf("taken %d, still in the backend %d (stats %d), closed %v: want the 2 taken reaped and the backend closed",
			len(b.reqs), b.inFlight(), st.InFlight, b.closed)
	}
}

// TestDeadBackendIsUndrained: a backend whose Reap keeps failing cannot be
// drained. Run says so (ErrUndrained, wrapping the cause, with the count in
// flight), does not touch DST's size, and Close leaves the backend open:
// the kernel may still be using the buffers and descriptors.
func TestDeadBackendIsUndrained(t *testing.T) {
	src := pattern(16*4096, 5)
	job, dstPath, cleanup := scriptJob(t, src, nil, 4096, 4)
	defer cleanup()
	job.FinalSize, job.CutBackOnStop = int64(len(src)), true
	b := &scripted{failReap: func(n int) error {
		if n >= 2 {
			return errInjected
		}
		return nil
	}}
	c, err := Open(job, func(Setup) (Backend, error) { return b, nil })
	if err != nil {
		t.Fatal(err)
	}
	b.fds = job.Files.Fds()
	st, err := c.Run(context.Background())
	var ue *UndrainedError
	if !errors.Is(err, ErrUndrained) || !errors.Is(err, errInjected) || !errors.As(err, &ue) {
		t.Fatalf("err = %v, want an *UndrainedError wrapping the injected error", err)
	}
	if b.inFlight() == 0 || st.InFlight != b.inFlight() || ue.InFlight != b.inFlight() || !c.Undrained() {
		t.Fatalf("backend holds %d, stats say %d, error says %d, Undrained %v: want the same count, not 0",
			b.inFlight(), st.InFlight, ue.InFlight, c.Undrained())
	}
	if err := c.Close(); !errors.Is(err, ErrUndrained) || b.closed {
		t.Fatalf("Close = %v, backend closed %v: want it left open, and the error again", err, b.closed)
	}
	// A DST that may still change is not cut back or given its size: a
	// write in flight could land after the truncate.
	if fi, _ := os.Stat(dstPath); fi.Size() <= st.Contiguous {
		t.Fatalf("DST is %d bytes, cut back to the %d written contiguously while writes were in flight", fi.Size(), st.Contiguous)
	}
}
