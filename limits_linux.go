package main

import (
	"fmt"

	"github.com/ringcp/ringcp/copier"

	"golang.org/x/sys/unix"
)

// minDescriptors is the fewest open files ringcp starts with: the three
// standard streams, the Go runtime's epoll and eventfd, SRC, DST, the
// ring, and a few more while Prepare inspects both ends. Below it the Go
// runtime itself dies with a 100-line fatal error when it first needs a
// descriptor (ulimit -n 6 or 7); everything else ringcp opens fails
// cleanly, before DST is touched. No real system runs with fewer.
const minDescriptors = 16

// checkDescriptors refuses to start with fewer than minDescriptors open
// files allowed. The Go runtime has already raised the soft limit to the
// hard one, so the soft limit is all there is.
func checkDescriptors() error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nil // nothing to go by: let the opens tell
	}
	if lim.Cur < minDescriptors {
		return &copier.RefusedError{Kind: copier.KindResources, Reason: fmt.Sprintf(
			"only %d open files allowed (ulimit -n): ringcp needs at least %d", lim.Cur, minDescriptors)}
	}
	return nil
}
