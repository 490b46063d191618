package syncproto

import (
	"context"
	"io"
	"sync"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/blocksync"
)

// The applier writes the source's changes into DST several at once and
// folds them into the target's whole digest one at a time, in the
// stream's order. Each change is a write, then a read-back of what DST
// holds there (the end-to-end check folds that, not what was sent): two
// trips to DST's device in series. With 1% of 4 KiB blocks changed at
// random a GiB has 2,600 changes, which applied one at a time kept the
// side holding DST busy 2.3 s of a 2.9 s sync (an ext4 on a loop device
// here) and held the link's frames behind them.
//
// The frame reader checks each change and queues it twice: to a worker
// (write, read back, digest), and to the settler in the stream's order
// with the acks between changes. The settler waits for each change in
// turn, folds the unchanged granules before it and its read-back
// digests, and acts on each ack (which lets the producer run further
// ahead) only once every change before it was folded: the whole digest
// means what it meant when changes were applied one by one. Changes
// never overlap (checkChange), so the writes in flight touch disjoint
// ranges of DST.

// applyDepth is how many changes are in flight at once, each in a
// buffer of MaxData bytes: 16 MiB, and enough to keep a device's queue
// full of 4 KiB writes and reads.
const applyDepth = 16

// op is one step of the source's stream: a change, or an ack (done nil).
type op struct {
	off, n int64
	zero   bool
	buf    []byte // the change's bytes (MaxData; the first n hold them), then its read-back
	ack    int64  // an ack's granule
	done   chan struct{}
	ds     []blocksync.Digest // DST's digests of the change's granules, read back
	err    error
}

type applier struct {
	t       *target
	dst     blocksync.Target // t's, its waits for a cap ended with the applier's ctx
	bufs    *align.Buffers   // aligned, so that Direct writes them in place; nil off Linux
	free    chan []byte
	jobs    chan *op
	order   chan *op
	closed  bool // jobs and order (the reader's)
	workers sync.WaitGroup
	settled chan struct{}
	err     error // the first change that failed, in the stream's order
}

func newApplier(t *target) *applier {
	a := &applier{t: t, free: make(chan []byte, applyDepth), jobs: make(chan *op, applyDepth),
		order: make(chan *op, 4*applyDepth), settled: make(chan struct{})}
	b, err := align.AllocBuffers(applyDepth, MaxData)
	for i := range applyDepth {
		if err != nil {
			a.free <- make([]byte, MaxData) // written through a bounce buffer
			continue
		}
		a.free <- b.Slots[i]
	}
	a.bufs = b
	return a
}

// start runs the workers and the settler. A change that fails cancels
// ctx, is reported to the source, and closes the connection, which ends
// the reader.
func (a *applier) start(ctx context.Context, cancel context.CancelCauseFunc) {
	a.dst = stopWaits(ctx, a.t.dst)
	for range applyDepth {
		a.workers.Add(1)
		go func() {
			defer a.workers.Done()
			dig := a.t.s.digester()
			for c := range a.jobs {
				a.do(ctx, dig, c)
			}
		}()
	}
	go func() {
		defer close(a.settled)
		if a.err = a.settle(ctx); a.err != nil {
			cancel(a.err)
			a.t.s.fail(a.err)
			a.t.s.stop()
		}
	}()
}

// take is a free buffer for the next change.
func (a *applier) take(ctx context.Context) ([]byte, error) {
	select {
	case b := <-a.free:
		return b, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// queue hands c to a worker, when a change, and to the settler.
func (a *applier) queue(ctx context.Context, c *op) error {
	if c.done != nil {
		a.jobs <- c // never blocks: a change holds one of applyDepth buffers, and jobs has room for them all
	}
	select {
	case a.order <- c:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// do applies c and reads it back. After a failure (ctx ended) it
// touches DST no more.
func (a *applier) do(ctx context.Context, dig *blocksync.Digester, c *op) {
	defer close(c.done)
	if err := ctx.Err(); err != nil {
		c.err = context.Cause(ctx)
		return
	}
	if c.zero {
		c.err = a.dst.Zero(c.off, c.n)
	} else {
		_, c.err = a.dst.WriteAt(c.buf[:c.n], c.off)
	}
	if c.err == nil {
		c.ds, c.err = a.readBack(dig, c)
	}
}

// readBack reads c's range back from DST (zeros past its end) into c's
// buffer and digests its granules: what DST holds now.
func (a *applier) readBack(dig *blocksync.Digester, c *op) ([]blocksync.Digest, error) {
	g := a.t.s.opt.Granule
	ds := make([]blocksync.Digest, 0, blocksync.Granules(c.n, g))
	for off, n := c.off, c.n; n > 0; {
		buf := c.buf[:min(n, int64(len(c.buf)))]
		got, err := a.dst.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return nil, err
		}
		clear(buf[got:])
		for i := 0; i < len(buf); i += g {
			ds = append(ds, dig.Sum(buf[i:min(i+g, len(buf))]))
		}
		off, n = off+int64(len(buf)), n-int64(len(buf))
	}
	return ds, nil
}

// settle folds the stream's changes and acks in order, as each change
// is applied. It returns the first change's failure, or nil once the
// stream ends (order closed) or ctx did.
func (a *applier) settle(ctx context.Context) error {
	for c := range a.order {
		if c.done == nil {
			a.t.ack(c.ack)
			continue
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil
		}
		a.free <- c.buf
		if c.err != nil {
			if ctx.Err() != nil {
				return nil // the change stopped because something else failed
			}
			return c.err
		}
		a.t.settle(c)
	}
	return nil
}

// drain waits until every change queued was applied and folded, and
// returns the first failure.
func (a *applier) drain() error {
	a.close()
	<-a.settled
	return a.err
}

func (a *applier) close() {
	if !a.closed {
		a.closed = true
		close(a.jobs)
		close(a.order)
	}
}

// wait ends the applier once the reader has stopped: it returns when
// no worker touches DST any more, with the first change's failure.
func (a *applier) wait() error {
	a.close()
	a.workers.Wait()
	<-a.settled
	if a.bufs != nil {
		a.bufs.Free()
	}
	return a.err
}
