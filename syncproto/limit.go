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

// wait takes n bytes from the limiter.
func (l *Limited) wait(n int) {
	for n > 0 && l.lim != nil {
		k := min(n, l.step)
		l.lim.WaitN(context.Background(), k) // k <= the burst: never fails
		n -= k
	}
}

func (l *Limited) ReadAt(p []byte, off int64) (int, error) {
	l.wait(len(p))
	n, err := l.Target.ReadAt(p, off)
	l.moved.Add(int64(n))
	return n, err
}

func (l *Limited) WriteAt(p []byte, off int64) (int, error) {
	l.wait(len(p))
	n, err := l.Target.WriteAt(p, off)
	l.moved.Add(int64(n))
	return n, err
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
