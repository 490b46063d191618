package copier

import (
	"fmt"
	"os"

	"github.com/ringcp/ringcp/qcow2"
	"golang.org/x/sys/unix"
)

// readDirect gives an image SRC on a local file or device an O_DIRECT
// view of it, for its data clusters (qcow2.Image.SetDirect): the same
// open file, reopened through /proc/self/fd so that it is the very inode
// the base end opened and checked, never another one a rename put under
// the name. Where that cannot be done (no /proc, a filesystem without
// O_DIRECT: tmpfs) the image is read through the page cache as before.
// It returns what releases the image and the base end.
func (s *imageSrc) readDirect(h *held, im *qcow2.Image) func() {
	release := func() { im.Close(); h.close() }
	if h.f == nil || im.Header().DataFile != "" {
		return release
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", h.f.Fd()), os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return release
	}
	im.SetDirect(f, int64(s.under.geo.DirectAlign()))
	return func() { release(); f.Close() }
}
