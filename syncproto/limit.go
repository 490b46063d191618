package syncproto

import (
	"context"
	"sync/atomic"

	"golang.org/x/time/rate"

	"github.com/ringcp/ringcp/blocksync"
)

// Limited is an end whose reads and writes are counted and keep,
// together, to a rate
// (ringcp sync --max-rate, on the end that syncproto reads and writes
// itself: the serving host's, and a pull's DST). Each request waits for
// its bytes before it is made, in steps of at most a quarter second of
// the rate, so that a small cap moves in small steps rather than bursts
// and a stopped sync waits at most one step.
type Limited struct {
	blocksync.Target
	lim   *rate.Limiter
	step  int
	moved atomic.Int64
}

// Limit caps t's reads and writes at bytesPerSecond together; 0 only
// counts them (Moved).
func Limit(t blocksync.Target, bytesPerSecond int64) *Limited {
	if bytesPerSecond <= 0 {
		return &Limited{Target: t}
	}
	step := int(min(max(bytesPerSecond/4, 4096), 8<<20))
	return &Limited{Target: t, lim: rate.NewLimiter(rate.Limit(bytesPerSecond), step), step: step}
}

// wait takes n bytes from the limiter, or returns why ctx ended first.
func (l *Limited) wait(ctx context.Context, n int) error {
	for n > 0 && l.lim != nil {
		k := min(n, l.step)
		if err := l.lim.WaitN(ctx, k); err != nil { // k <= the burst: fails only when ctx ends
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return err
		}
		n -= k
	}
	return nil
}

func (l *Limited) ReadAt(p []byte, off int64) (int, error) {
	return l.readAt(context.Background(), p, off)
}

func (l *Limited) WriteAt(p []byte, off int64) (int, error) {
	return l.writeAt(context.Background(), p, off)
}

func (l *Limited) readAt(ctx context.Context, p []byte, off int64) (int, error) {
	if err := l.wait(ctx, len(p)); err != nil {
		return 0, err
	}
	n, err := l.Target.ReadAt(p, off)
	l.moved.Add(int64(n))
	return n, err
}

func (l *Limited) writeAt(ctx context.Context, p []byte, off int64) (int, error) {
	if err := l.wait(ctx, len(p)); err != nil {
		return 0, err
	}
	n, err := l.Target.WriteAt(p, off)
	l.moved.Add(int64(n))
	return n, err
}

// stoppable is a Limited whose reads and writes stop waiting for the
// cap when ctx ends: a session's, so that a stopped sync (or one whose
// peer went away) does not wait for the bytes of every request in
// flight, 16 changes of up to 1 MiB and DST's windows, at the cap.
type stoppable struct {
	*Limited
	ctx context.Context
}

func (l stoppable) ReadAt(p []byte, off int64) (int, error)  { return l.readAt(l.ctx, p, off) }
func (l stoppable) WriteAt(p []byte, off int64) (int, error) { return l.writeAt(l.ctx, p, off) }

// stopWaits is dst with its waits for a cap ended by ctx, when it is
// capped; else dst.
func stopWaits(ctx context.Context, dst blocksync.Target) blocksync.Target {
	switch l := dst.(type) {
	case *Limited:
		return stoppable{l, ctx}
	case stoppable:
		return stoppable{l.Limited, ctx}
	}
	return dst
}

// stopSourceWaits is stopWaits for a SRC.
func stopSourceWaits(ctx context.Context, src blocksync.Source) blocksync.Source {
	if l, ok := src.(*Limited); ok {
		return stoppable{l, ctx}
	}
	return src
}

// Moved is the bytes read and written through l so far (0 for a nil l).
func (l *Limited) Moved() int64 {
	if l == nil {
		return 0
	}
	return l.moved.Load()
}

// Identity is the end's, when it has one: the handshake's check that the
// two ends are not the same bytes must see through the cap.
func (l *Limited) Identity() blocksync.Identity {
	if id, ok := l.Target.(interface{ Identity() blocksync.Identity }); ok {
		return id.Identity()
	}
	return blocksync.Identity{}
}

// SharesBytes is the end's, when it has one: the handshake's check that
// the peer's end is not a partition of this one (or a loop device over
// it) must see through the cap too.
func (l *Limited) SharesBytes(peer blocksync.Identity) string {
	if sb, ok := l.Target.(bytesSharer); ok {
		return sb.SharesBytes(peer)
	}
	return ""
}

// Commit names a new DST, when the end is one (blocksync.File.Commit).
func (l *Limited) Commit() error {
	if c, ok := l.Target.(interface{ Commit() error }); ok {
		return c.Commit()
	}
	return nil
}

// DropCache drops the end's cached pages, when it can (verify.go).
func (l *Limited) DropCache() error {
	if d, ok := l.Target.(interface{ DropCache() error }); ok {
		return d.DropCache()
	}
	return nil
}
