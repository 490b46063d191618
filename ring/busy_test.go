package ring

import (
	"syscall"
	"testing"
)

// Kernels before 5.19 answer EBUSY to a submit while CQEs wait in the
// overflow list; any kernel may answer EAGAIN when short of memory. The ring
// must make room by moving ready CQEs aside, retry, and still hand every
// completion out once, in order.
func TestBusySubmitStashesAndRetries(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EBUSY, syscall.EAGAIN} {
		t.Run(errno.Error(), func(t *testing.T) {
			r := newRing(t, 8, nil)
			for i := 0; i < 4; i++ {
				sqe := r.GetSQE()
				sqe.PrepNop()
				sqe.UserData = uint64(i)
			}
			if _, err := r.SubmitAndWait(4); err != nil {
				t.Fatal(err)
			}
			real := enterSyscall
			t.Cleanup(func() { enterSyscall = real })
			refusals := 0
			enterSyscall = func(fd int, sub, min, flags uint32, arg *getEventsArg) (int, syscall.Errno) {
				if sub > 0 && refusals == 0 {
					refusals++
					return -1, errno
				}
				return real(fd, sub, min, flags, arg)
			}
			sqe := r.GetSQE()
			sqe.PrepNop()
			sqe.UserData = 4
			if n, err := r.SubmitAndWait(5); err != nil || n != 1 {
				t.Fatalf("SubmitAndWait after %v = %d, %v", errno, n, err)
			}
			if refusals != 1 {
				t.Fatalf("the injected %v was not hit", errno)
			}
			var got []uint64
			if _, err := r.ForEachCQE(func(c CQE) { got = append(got, c.UserData) }); err != nil {
				t.Fatal(err)
			}
			for i, u := range got {
				if u != uint64(i) {
					t.Fatalf("completions %v, want 0..4 in order", got)
				}
			}
			if len(got) != 5 || r.InFlight() != 0 {
				t.Fatalf("got %v, in flight %d", got, r.InFlight())
			}
		})
	}
}
