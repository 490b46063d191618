package cli

import (
	"fmt"

	"github.com/ringcp/ringcp/copier"
	"golang.org/x/sys/unix"
)

// minFreeDescriptors is the fewest free descriptors ringcp starts with:
// the Go runtime's epoll and eventfd, which it opens when the first file
// is, and two to spare. Without them the Go runtime dies with a 100-line
// fatal error (ulimit -n 6 or 7, or a low limit with descriptors
// inherited from the parent). Everything else ringcp opens (SRC, DST,
// locks, the ring) fails cleanly when the limit is reached, as a refusal
// before DST is touched.
const minFreeDescriptors = 4

// checkDescriptors refuses to start with fewer than minFreeDescriptors
// descriptors left under the open-file limit: it looks for free ones
// with F_GETFD, which opens nothing, and stops at the few it wants (the
// limit may be a million: the Go runtime has already raised the soft
// limit to the hard one, so the soft limit is all there is).
func checkDescriptors() error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nil // nothing to go by: let the opens tell
	}
	limit := int(min(lim.Cur, 1<<16))
	free := 0
	for fd := 0; fd < limit && free < minFreeDescriptors; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			free++
		}
	}
	if free < minFreeDescriptors {
		return &copier.RefusedError{Kind: copier.KindResources, Reason: fmt.Sprintf(
			"only %d open files allowed (ulimit -n) and %d already open: raise the limit", limit, limit-free)}
	}
	return nil
}
