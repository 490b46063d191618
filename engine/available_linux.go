package engine

import (
	"runtime"

	"github.com/ringcp/ringcp/ring"
)

// UringAvailable sets up and closes a tiny ring to learn, before anything
// is written, whether io_uring can be used here. The error matches
// ring.ErrUnavailable when it cannot, and says why. It is not cached: it
// costs microseconds, and an admin may flip kernel.io_uring_disabled while
// a long-lived process (a hypervisor agent) runs.
func UringAvailable() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := ring.Setup(1, &ring.Options{Flags: ringFlags})
	if err != nil {
		return err
	}
	return r.Close()
}
