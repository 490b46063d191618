package syncproto

import (
	"context"
	"io"

	"github.com/ringcp/ringcp/blocksync"
)

// With Options.Verify (ringcp sync --verify across hosts) the target
// checks more than the end-to-end digest does. That digest folds what
// DST held when it was read (a granule left alone) or read back right
// after its write (a changed one), which may come from the page cache of
// the host that holds DST. After the fdatasync, the target drops DST's
// pages (they are clean then) and reads all of [0, SRC's size) again,
// from the device, folding every granule afresh: the whole of DST, not
// only what the sync wrote, must then equal SRC's digest, or the sync
// ends with a *MismatchError (exit 3) and DST is not named.

// reread reads DST back from the device and returns its whole digest.
func (t *target) reread() (blocksync.Digest, error) {
	if d, ok := t.dst.(interface{ DropCache() error }); ok {
		if err := d.DropCache(); err != nil {
			return blocksync.Digest{}, err
		}
	}
	s := t.s
	w, err := blocksync.NewWhole(s.alg, s.key, s.size, s.opt.Granule)
	if err != nil {
		return blocksync.Digest{}, err
	}
	g, win := s.opt.Granule, int64(s.opt.Window)
	work := func() func(off, n int64) ([]blocksync.Digest, error) {
		dig, buf := s.digester(), make([]byte, win)
		return func(off, n int64) ([]blocksync.Digest, error) {
			b := buf[:n]
			got, err := t.dst.ReadAt(b, off)
			if err != nil && err != io.EOF {
				return nil, err
			}
			clear(b[got:]) // DST ends early only if it shrank: its digest then differs
			ds := make([]blocksync.Digest, 0, (len(b)+g-1)/g)
			for i := 0; i < len(b); i += g {
				ds = append(ds, dig.Sum(b[i:min(i+g, len(b))]))
			}
			return ds, nil
		}
	}
	err = inOrder(context.Background(), s.size, win, s.opt.Workers, work, func(_, _ int64, ds []blocksync.Digest) error {
		for _, d := range ds {
			w.Add(d)
		}
		return nil
	})
	if err != nil {
		return blocksync.Digest{}, err
	}
	return w.Sum(), nil
}
