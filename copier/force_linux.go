package copier

import (
	"errors"
	"os"

	"github.com/ringcp/ringcp/guard"
	"golang.org/x/sys/unix"
)

// openBlockDest opens a block device DST with O_EXCL: while ringcp writes,
// nothing can mount it or claim it. O_EXCL fails with EBUSY if it is
// mounted or held by another exclusive opener (LVM, md, a VM, another
// ringcp). With Force a held device is opened without O_EXCL, after
// checking again that it is not mounted: that is never overridden.
func (p *Plan) openBlockDest(flag int) (*os.File, error) {
	f, err := os.OpenFile(p.dst.path, flag|os.O_EXCL, 0)
	if !errors.Is(err, unix.EBUSY) {
		return f, err
	}
	if !p.opts.Force {
		return nil, refuseErr(p.dst.path, "block device is in use (mounted or held open exclusively)", err)
	}
	busy, berr := p.dstBusy()
	if berr != nil {
		return nil, berr
	}
	for _, b := range busy {
		if b.Kind == guard.Mounted {
			return nil, refuseMounted(p.dst.path, b.What)
		}
	}
	return os.OpenFile(p.dst.path, flag, 0)
}
