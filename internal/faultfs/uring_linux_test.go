package faultfs

import (
	"errors"
	"runtime"
	"testing"

	"github.com/ringcp/ringcp/internal/uringtest"
	"github.com/ringcp/ringcp/ring"
)

// uringRW runs one IORING_OP_READ or _WRITE of buf at off on fd through a
// fresh ring of our ring package and returns the completion's result: a
// byte count or a negated errno. The engine's io_uring backend depends on
// FUSE completing them short and then with the fault's errno (see
// openFlags). It skips the test when io_uring is unavailable, and holds
// uringtest's shared lock so that no other test switches io_uring off
// meanwhile.
func uringRW(t *testing.T, op uint8, fd int, buf []byte, off int64) int32 {
	t.Helper()
	uringtest.NeedOn(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := ring.Setup(1, nil)
	if errors.Is(err, ring.ErrUnavailable) {
		t.Skipf("io_uring unavailable: %v", err)
	}
	if err != nil {
		t.Fatalf("ring setup: %v", err)
	}
	defer r.Close()
	sqe := r.GetSQE()
	if op == ring.OpRead {
		sqe.PrepRead(int32(fd), buf, uint64(off))
	} else {
		sqe.PrepWrite(int32(fd), buf, uint64(off))
	}
	// buf is Go memory, which the buffer rule warns against; it is safe
	// here because we wait for the completion while buf is still live, and
	// Go's collector does not move heap objects.
	if _, err := r.SubmitAndWait(1); err != nil {
		t.Fatalf("io_uring submit: %v", err)
	}
	cqe, ok, err := r.PeekCQE()
	if err != nil || !ok {
		t.Fatalf("io_uring returned no completion: %v", err)
	}
	r.CQESeen()
	return cqe.Res
}
