package syncproto

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/blocksync"
)

// The target holds DST. It reads DST at full speed and streams the
// digest of every granule of [0, SRC's size) (granules past DST's end
// are zeros: their digests cost no read), and applies the changes the
// source sends back, in order. It may run at most maxAhead granules
// ahead of the source's acknowledgements, which bounds the digests it
// keeps.
//
// The end-to-end check: the target folds, in granule order, the digest
// of what DST holds afterwards into a Whole: its own digest for a
// granule left alone (the source found it equal to SRC's), the digest of
// the granule read back from DST after writing or zeroing it. The source
// folds SRC's digests the same way. Equal Wholes mean equal content.

// maxAhead is how many granules' digests the target may send beyond the
// last acknowledged one: 256 MiB of DST in 4 KiB granules, 4 GiB in 64
// KiB ones, 2 MiB of digests either way.
const maxAhead = 1 << 16

type target struct {
	s   *session
	dst blocksync.Target
	old int64 // DST's size before

	mu      sync.Mutex
	cond    *sync.Cond
	pending []blocksync.Digest // the digests sent for granules [resolved, sent)
	sent    int64
	acked   int64
	dead    bool // the session failed: the sender stops waiting

	resolved int64 // granules folded into whole (by the applier's settler)
	front    int64 // granules the stream has settled: changes and acks checked (by the frame reader)
	whole    *blocksync.Whole
	dstRead  atomic.Int64 // the producer's workers add to it
	stats    blocksync.Stats
}

// runTarget syncs dst from the source at the other end of s, whose size
// s holds, and answers with done once DST is synced.
func runTarget(ctx context.Context, s *session, dst blocksync.Target) (blocksync.Stats, error) {
	t := &target{s: s, dst: dst, old: dst.Size()}
	t.cond = sync.NewCond(&t.mu)
	t.stats = blocksync.Stats{Size: s.size, OldSize: t.old, Granules: s.granules}
	if !dst.Resizable() && t.old < s.size {
		return t.stats, s.fail(&blocksync.RefusedError{Kind: blocksync.KindTooSmall, Path: dst.Name(),
			Reason: fmt.Sprintf("DST holds %d bytes, less than SRC's %d", t.old, s.size)})
	}
	w, err := blocksync.NewWhole(s.alg, s.key, s.size, s.opt.Granule)
	if err != nil {
		return t.stats, s.fail(err)
	}
	t.whole = w
	outer := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	t.dst = stopWaits(ctx, dst)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := t.produce(ctx); err != nil {
			cancel(err)
			s.fail(err)
			s.stop() // the applier is reading: end its read
		}
	}()
	err = t.apply(ctx)
	if err != nil {
		cancel(err)
	}
	if cause := context.Cause(ctx); cause != nil {
		t.kill()
		if !isRemote(cause) {
			s.fail(cause)
		}
		s.stop()
		wg.Wait()
		t.stats.DstRead = t.dstRead.Load()
		if err := outerStop(outer); err != nil {
			return t.stats, err
		}
		return t.stats, preferPeer(err, cause)
	}
	wg.Wait()
	t.stats.DstRead = t.dstRead.Load()
	t.stats.SrcRead = s.size // the source reads all of SRC
	return t.stats, nil
}

// kill wakes a sender waiting for acknowledgements: the session is over.
func (t *target) kill() {
	t.mu.Lock()
	t.dead = true
	t.cond.Broadcast()
	t.mu.Unlock()
}

// produce reads DST's windows and sends their digests in order.
func (t *target) produce(ctx context.Context) error {
	g, win := t.s.opt.Granule, int64(t.s.opt.Window)
	// Aligned, so that a Direct DST reads its windows with O_DIRECT.
	bufs, err := align.AllocBuffers(t.s.opt.Workers, int(win))
	if err == nil {
		defer bufs.Free() // after inOrder, which returns once its workers did
	}
	next := 0
	work := func() func(off, n int64) ([]blocksync.Digest, error) {
		dig, buf := t.s.digester(), []byte(nil)
		if err == nil {
			buf, next = bufs.Slots[next], next+1
		} else {
			buf = make([]byte, win)
		}
		return func(off, n int64) ([]blocksync.Digest, error) { return t.digestWindow(dig, buf[:n], off) }
	}
	return inOrder(ctx, t.s.size, win, t.s.opt.Workers, work, func(off, n int64, ds []blocksync.Digest) error {
		first := off / int64(g)
		for len(ds) > 0 {
			k := min(len(ds), maxDigests)
			if err := t.waitCredit(ds[:k]); err != nil {
				return err
			}
			if err := t.s.fw.write(tDigests, encodeDigests(first, ds[:k])...); err != nil {
				return err
			}
			first, ds = first+int64(k), ds[k:]
		}
		return nil
	})
}

// digestWindow reads DST's side of a window (zeros past its end) and
// returns its granules' digests.
func (t *target) digestWindow(dig *blocksync.Digester, buf []byte, off int64) ([]blocksync.Digest, error) {
	if off < t.old {
		n, err := t.dst.ReadAt(buf[:min(int64(len(buf)), t.old-off)], off)
		t.dstRead.Add(int64(n))
		if err != nil && err != io.EOF {
			return nil, err
		}
		clear(buf[n:])
	} else {
		clear(buf)
	}
	g := t.s.opt.Granule
	ds := make([]blocksync.Digest, 0, (len(buf)+g-1)/g)
	for i := 0; i < len(buf); i += g {
		ds = append(ds, dig.Sum(buf[i:min(i+g, len(buf))]))
	}
	return ds, nil
}

// waitCredit waits until ds may go out, and records them as sent before
// they are: a change for one of them may then come back at once.
func (t *target) waitCredit(ds []blocksync.Digest) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.sent+int64(len(ds))-t.acked > maxAhead && !t.dead {
		t.cond.Wait()
	}
	if t.dead {
		return errSessionOver
	}
	t.pending = append(t.pending, ds...)
	t.sent += int64(len(ds))
	return nil
}

var errSessionOver = fmt.Errorf("syncproto: the session is over")
