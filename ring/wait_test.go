package ring

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestWaitTimeoutReturnsWithoutCompletion: a bounded wait on a request
// that cannot complete (a read of an empty pipe) returns after its
// timeout with nothing ready and no error, with the kernel's timeout
// (EXT_ARG) and with the polling used on kernels without it; the request
// completes once the pipe has data, and nothing is lost.
func TestWaitTimeoutReturnsWithoutCompletion(t *testing.T) {
	for _, extArg := range []bool{true, false} {
		t.Run(map[bool]string{true: "ext-arg", false: "poll"}[extArg], func(t *testing.T) {
			r := newRing(t, 4, &Options{Flags: FlagSingleIssuer | FlagDeferTaskrun | FlagTaskrunFlag})
			if r.Features()&FeatExtArg == 0 {
				t.Skip("kernel without IORING_FEAT_EXT_ARG (< 5.11)")
			}
			if !extArg {
				r.features &^= FeatExtArg // as on a kernel before 5.11
			}
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			defer pw.Close()
			buf := mmapBuf(t, 4096)
			sqe := r.GetSQE()
			sqe.PrepRead(int32(pr.Fd()), buf, 0)
			sqe.UserData = 7
			const timeout = 30 * time.Millisecond
			start := time.Now()
			n, err := r.SubmitAndWaitTimeout(1, timeout)
			if err != nil || n != 1 {
				t.Fatalf("SubmitAndWaitTimeout = %d, %v; want the read submitted and no error", n, err)
			}
			if waited := time.Since(start); waited < timeout {
				t.Fatalf("returned after %v, before the %v timeout, with nothing ready", waited, timeout)
			}
			if c, ok, err := r.PeekCQE(); ok || err != nil {
				t.Fatalf("a completion %+v (err %v) from a read of an empty pipe", c, err)
			}
			if _, err := pw.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			if _, err := r.SubmitAndWaitTimeout(1, time.Minute); err != nil {
				t.Fatal(err)
			}
			c, ok, err := r.PeekCQE()
			if !ok || err != nil || c.UserData != 7 || c.Res != 1 {
				t.Fatalf("after the write: %+v ok=%v err=%v, want the read of 1 byte", c, ok, err)
			}
			r.CQESeen()
			if r.InFlight() != 0 {
				t.Fatalf("in flight %d after reaping everything", r.InFlight())
			}
		})
	}
}

// TestWaitTimeoutFailsOnDeadRing: errors other than the timeout still come
// out of a bounded wait.
func TestWaitTimeoutFailsOnDeadRing(t *testing.T) {
	r := newRing(t, 4, nil)
	real := enterSyscall
	t.Cleanup(func() { enterSyscall = real })
	enterSyscall = func(int, uint32, uint32, uint32, *getEventsArg) (int, syscall.Errno) {
		return -1, syscall.EBADR
	}
	r.GetSQE().PrepNop()
	if _, err := r.SubmitAndWaitTimeout(1, time.Second); err != ErrCQLost {
		t.Fatalf("err = %v, want ErrCQLost", err)
	}
}
