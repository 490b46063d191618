package ring

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/sys/unix"
)

// newRing sets up a ring for one test on a locked OS thread, so that
// SINGLE_ISSUER rings work, and closes it at the end.
func newRing(t testing.TB, entries uint32, opts *Options) *Ring {
	t.Helper()
	uringtest.NeedOn(t)
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	r, err := Setup(entries, opts)
	if err != nil {
		t.Fatalf("Setup(%d, %+v): %v", entries, opts, err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// mmapBuf returns anonymous memory outside the Go heap, as the buffer rule
// asks.
func mmapBuf(t testing.TB, size int) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap %d: %v", size, err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

// tempFile opens a new file in the test's temp dir with extra open flags.
func tempFile(t testing.TB, flags int) *os.File {
	t.Helper()
	name := filepath.Join(t.TempDir(), "data")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|flags, 0o600)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// fill writes a pattern that differs at every offset and between runs.
func fill(b []byte, seed byte) {
	for i := range b {
		b[i] = byte(i*7+i>>9) ^ seed
	}
}

// submitOne prepares one SQE with prep, submits it, waits for its CQE and
// returns it.
func submitOne(t testing.TB, r *Ring, prep func(*SQE)) CQE {
	t.Helper()
	sqe := r.GetSQE()
	if sqe == nil {
		t.Fatal("GetSQE: SQ full on an idle ring")
	}
	prep(sqe)
	if _, err := r.SubmitAndWait(1); err != nil {
		t.Fatalf("SubmitAndWait: %v", err)
	}
	cqe, ok, err := r.PeekCQE()
	if err != nil || !ok {
		t.Fatalf("PeekCQE after wait: ok=%v err=%v", ok, err)
	}
	r.CQESeen()
	return cqe
}
