package enginetest

import (
	"errors"
	"math/rand/v2"
	"syscall"
	"time"

	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
)

// Chaos wraps a backend with what real kernels and filesystems do to a
// copy now and then, so the engine's completion handling is exercised on
// every path: completions out of order, -EAGAIN for any request, short
// reads and writes (reported short after the whole request ran, so the
// engine redoes the rest), and fallocate modes refused as unsupported
// (EOPNOTSUPP or EINVAL) some of the time.
type Chaos struct {
	Seed uint64
	// MinShort is the least a short completion reports: the O_DIRECT
	// alignment, since a direct transfer below it cannot be resumed.
	MinShort int
	// NoFallocate refuses every fallocate, as a filesystem without punch
	// or zero range does.
	NoFallocate bool // punch and zero range; allocation still works
	// Cancel, when set, is called once CancelAfter completions were handed
	// out: a stop in the middle of whatever is in flight.
	Cancel      func()
	CancelAfter int
	// FailAt, when positive, fails the FailAt-th request submitted with
	// EIO (without running it) and records it in Failed.
	FailAt int
	Failed *engine.Request
	// ReapFailAt, when positive, makes the ReapFailAt-th Reap fail once
	// with ErrReapFailed, handing nothing out, with requests in flight: a
	// backend that failed and recovered, which the engine must drain.
	ReapFailAt int
	// Outstanding, when not nil, is set at Close to how many requests the
	// backend took and never handed out; the engine closes only a drained
	// backend, so it must be 0.
	Outstanding *int
}

// ErrReapFailed is the error of Chaos.ReapFailAt.
var ErrReapFailed = errors.New("chaos: Reap failed")

// Wrap returns a NewBackend that builds nb's backend inside the chaos.
func (c Chaos) Wrap(nb engine.NewBackend) engine.NewBackend {
	return func(s engine.Setup) (engine.Backend, error) {
		inner, err := nb(s)
		if err != nil {
			return nil, err
		}
		return &chaosBackend{Chaos: c, inner: inner, rng: rand.New(rand.NewPCG(c.Seed, 1)),
			reqs: make(map[int]engine.Request), buf: make([]engine.Completion, s.Depth+1)}, nil
	}
}

// zeroing are the fallocate modes that make a range read as zeros; a
// filesystem without them still takes mode 0 (allocate) and KEEP_SIZE.
const zeroing = unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_ZERO_RANGE

type chaosBackend struct {
	Chaos
	inner engine.Backend
	rng   *rand.Rand
	reqs  map[int]engine.Request // in flight in inner, by slot
	ready []engine.Completion    // held back or made up, not yet handed out
	buf   []engine.Completion
	given int // completions handed out
	count int // requests submitted
	taken int // requests taken
	reaps int
}

func (b *chaosBackend) Name() string      { return b.inner.Name() }
func (b *chaosBackend) Caps() engine.Caps { return b.inner.Caps() }
func (b *chaosBackend) Close() error {
	if b.Outstanding != nil {
		*b.Outstanding = b.taken - b.given
	}
	return b.inner.Close()
}

// Submit takes every request: those it answers itself at once, the rest
// through inner. When inner takes only some, the requests after them are
// reported as not taken, with the answers made up for them withdrawn.
func (b *chaosBackend) Submit(reqs []engine.Request) (int, error) {
	var pass []engine.Request
	var at []int // index in reqs of each request in pass
	for i, q := range reqs {
		b.count++
		switch {
		case b.count == b.FailAt:
			*b.Failed = q
			b.ready = append(b.ready, engine.Completion{Slot: q.Slot, Errno: syscall.EIO})
		case q.Op != engine.OpSync && b.rng.IntN(8) == 0:
			b.ready = append(b.ready, engine.Completion{Slot: q.Slot, Errno: syscall.EAGAIN})
		case q.Op == engine.OpFallocate && q.Mode&zeroing != 0 && (b.NoFallocate || b.rng.IntN(4) == 0):
			errno := syscall.EOPNOTSUPP
			if b.rng.IntN(2) == 0 {
				errno = syscall.EINVAL
			}
			b.ready = append(b.ready, engine.Completion{Slot: q.Slot, Errno: errno})
		default:
			b.reqs[q.Slot] = q
			pass, at = append(pass, q), append(at, i)
		}
	}
	n, err := len(pass), error(nil)
	if len(pass) > 0 {
		n, err = b.inner.Submit(pass)
	}
	taken := len(reqs)
	if err != nil && n < len(pass) {
		taken = at[n]
		b.withdraw(reqs[taken:])
	}
	b.taken += taken
	return taken, err
}

// withdraw forgets the made-up answers of requests that were not taken.
func (b *chaosBackend) withdraw(gone []engine.Request) {
	for _, q := range gone {
		delete(b.reqs, q.Slot)
		for i := len(b.ready) - 1; i >= 0; i-- {
			if b.ready[i].Slot == q.Slot {
				b.ready = append(b.ready[:i], b.ready[i+1:]...)
				break
			}
		}
	}
}

func (b *chaosBackend) Reap(out []engine.Completion, atLeast int, timeout time.Duration) (int, error) {
	want := 0
	if len(b.ready) < atLeast {
		want = atLeast - len(b.ready)
	}
	if b.reaps++; b.reaps == b.ReapFailAt {
		return 0, ErrReapFailed
	}
	n, err := b.inner.Reap(b.buf, want, timeout)
	if err != nil {
		return 0, err
	}
	for _, c := range b.buf[:n] {
		b.ready = append(b.ready, b.shorten(c))
	}
	// Hand out a random number (at least atLeast) in a random order.
	b.rng.Shuffle(len(b.ready), func(i, j int) { b.ready[i], b.ready[j] = b.ready[j], b.ready[i] })
	k := min(len(out), len(b.ready))
	if k > atLeast {
		k = atLeast + b.rng.IntN(k-atLeast+1)
	}
	copy(out, b.ready[:k])
	b.ready = append(b.ready[:0], b.ready[k:]...)
	if b.given += k; b.Cancel != nil && b.given >= b.CancelAfter {
		b.Cancel()
	}
	return k, nil
}

// shorten reports some whole reads and writes as short.
func (b *chaosBackend) shorten(c engine.Completion) engine.Completion {
	q, ok := b.reqs[c.Slot]
	delete(b.reqs, c.Slot)
	if !ok || c.Errno != 0 || (q.Op != engine.OpRead && q.Op != engine.OpWrite) {
		return c
	}
	least := max(1, b.MinShort)
	if q.File == engine.FileDstTail {
		least = 1
	}
	if c.N > least && b.rng.IntN(4) == 0 {
		c.N = least + b.rng.IntN(c.N-least)
	}
	return c
}
