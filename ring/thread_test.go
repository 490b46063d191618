package ring

import (
	"errors"
	"runtime"
	"testing"
)

// A SINGLE_ISSUER ring driven from another OS thread: the kernel answers
// EEXIST and the ring names the rule that was broken.
func TestSingleIssuerFromAnotherThread(t *testing.T) {
	r := newRing(t, 4, &Options{Flags: FlagSingleIssuer | FlagDeferTaskrun, Require: FlagSingleIssuer})
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		sqe := r.GetSQE()
		sqe.PrepNop()
		_, err := r.SubmitAndWait(1)
		done <- err
	}()
	if err := <-done; !errors.Is(err, ErrWrongThread) {
		t.Fatalf("submit from another thread: err = %v, want ErrWrongThread", err)
	}
}
