package engine

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// threadFree is a scripted backend that any thread may drive.
type threadFree struct{ *scripted }

func (threadFree) ThreadFree() {}

// TestOpenLocksOnlyForThreadBoundBackends: Open keeps the goroutine on
// its thread for a backend that needs it (a ring), and leaves it free
// for a ThreadFree one (the pool), whose copy runs as before; Close
// unlocks only what Open locked.
func TestOpenLocksOnlyForThreadBoundBackends(t *testing.T) {
	for _, free := range []bool{false, true} {
		src := pattern(16*4096, 3)
		job, dstPath, cleanup := scriptJob(t, src, nil, 4096, 4)
		b := &scripted{}
		var be Backend = b
		if free {
			be = threadFree{b}
		}
		c, err := Open(job, func(Setup) (Backend, error) { return be, nil })
		if err != nil {
			cleanup()
			t.Fatal(err)
		}
		if c.locked == free {
			t.Errorf("ThreadFree %v: locked %v, want %v", free, c.locked, !free)
		}
		b.fds = job.Files.Fds()
		_, err = c.Run(context.Background())
		if cerr := c.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("ThreadFree %v: %v", free, err)
		}
		if got, _ := os.ReadFile(dstPath); !bytes.Equal(got, src) {
			t.Errorf("ThreadFree %v: DST differs from SRC", free)
		}
		cleanup()
	}
}
