package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Budget is the set of buffer slots that copies share: one memory and
// queue-depth budget for every copy of a process (ringcp --jobs), however
// many run at once. Each running copy joins it and takes slots as it has
// chunks to move; a slot is handed out fairly: while several copies want
// slots, none holds more than its share of the depth, so a small copy
// beside a big one moves at its share of the speed and is not starved.
// A copy that has nothing left to plan stops counting, and the others
// may take what it leaves.
//
// Its window (window.go: the slots out at once, the size of a request)
// can be changed while copies run, by the budget's controller.
type Budget struct {
	bufs    [][]byte
	samples sampler

	mu       sync.Mutex
	free     []int         // buffer indexes not held by a copy
	window   Window        // Depth: slots that may be out (len(bufs)-len(free)) at once
	wanting  int           // members that have chunks left to plan
	members  []*member     // joined and not left
	changed  chan struct{} // closed, and replaced, when a slot frees, the window changes or Wake is called
	refusals uint64        // counts refusals, to order the members waiting
}

// NewBudget makes a budget of the buffers (align.AllocBuffers' slots, all
// the same size), with a depth of all of them and requests of a block.
func NewBudget(bufs [][]byte) *Budget {
	b := &Budget{bufs: bufs, window: Window{Depth: len(bufs)}, changed: make(chan struct{})}
	for i := len(bufs) - 1; i >= 0; i-- {
		b.free = append(b.free, i)
	}
	return b
}

// Buffers are every slot's buffer, indexed by slot: what a backend
// registers.
func (b *Budget) Buffers() [][]byte { return b.bufs }

// Depth is how many slots may be out at once now.
func (b *Budget) Depth() int { return b.Window().Depth }

// Window is the depth and request size now.
func (b *Budget) Window() Window {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.window
}

// SetWindow changes the depth (from 1 to all the slots) and the request
// size. A lower depth takes effect as copies give slots back, a smaller
// request with each copy's next request: nothing in flight is cut short.
// Copies waiting on the budget look again when it changed.
func (b *Budget) SetWindow(w Window) {
	w.Depth = min(max(w.Depth, 1), len(b.bufs))
	w.Request = max(w.Request, 0)
	b.mu.Lock()
	defer b.mu.Unlock()
	if w != b.window {
		b.window = w
		b.wake()
	}
}

// SetController makes c the budget's controller (window.go); nil leaves
// the window as it is.
func (b *Budget) SetController(c Controller) {
	b.samples.mu.Lock()
	defer b.samples.mu.Unlock()
	b.samples.ctrl = c
}

// SetSampleEvery makes the controller hear a sample about every d
// (SampleEvery when d is 0): a controller that must settle within a short
// copy asks for samples more often than SampleEvery.
func (b *Budget) SetSampleEvery(d time.Duration) {
	b.samples.every.Store(int64(max(d, 0)))
}

// Wake makes every copy waiting on the budget look again at once: a copy
// waiting for a rate cap's permission, for a slot, or for a retry's
// backoff. Whoever changes a rate cap the copies pace by calls it, so
// that a cap lifted, lowered or changed takes effect now, not when the
// wait planned under the old cap ends.
func (b *Budget) Wake() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.wake()
}

// wake tells waiting members that something changed. Called with mu held.
func (b *Budget) wake() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// share is the most slots one of the wanting members may hold.
func (b *Budget) share() int {
	n := max(b.wanting, 1)
	return (b.window.Depth + n - 1) / n
}

// member is one copy's hold on a budget.
type member struct {
	b       *Budget
	held    int
	wanting bool
	// refused is the budget's change channel when take last failed: wait
	// blocks on it, so a slot given back in between is not missed. It is
	// nil again once a take succeeds. since orders the members waiting:
	// the budget's refusal count when this wait began.
	refused chan struct{}
	since   uint64
	// sampled marks the budget's sample the member's copy was last
	// counted in (sampler.add), under the sampler's lock.
	sampled uint64
}

// join makes a member that wants slots.
func (b *Budget) join() *member {
	m := &member{b: b}
	b.mu.Lock()
	b.members = append(b.members, m)
	b.mu.Unlock()
	m.want(true)
	return m
}

// want says whether the member has chunks left to plan: only those count
// for the fair share.
func (m *member) want(on bool) {
	b := m.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if on == m.wanting {
		return
	}
	m.wanting = on
	if on {
		b.wanting++
	} else {
		b.wanting--
		b.wake()
	}
}

// take hands the member a free slot if the depth and its share allow.
func (m *member) take() (int, bool) {
	b := m.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.free) == 0 || len(b.bufs)-len(b.free) >= b.window.Depth || m.held >= b.share() || b.owedElsewhere(m) {
		if m.refused == nil {
			b.refusals++
			m.since = b.refusals
		}
		m.refused = b.changed
		return 0, false
	}
	m.refused = nil
	idx := b.free[len(b.free)-1]
	b.free = b.free[:len(b.free)-1]
	m.held++
	return idx, true
}

// owedElsewhere: another wanting member, refused before, comes first: it
// holds fewer slots than m, or as many and has waited longer (m, not
// waiting, came after it). m gave a slot back and would otherwise take it
// again at once, before the other even woke; with more copies than slots
// that starved some for seconds. Called with mu held.
func (b *Budget) owedElsewhere(m *member) bool {
	for _, o := range b.members {
		if o == m || !o.wanting || o.refused == nil {
			continue
		}
		earlier := m.refused == nil || o.since < m.since
		if o.held < m.held || (o.held == m.held && earlier) {
			return true
		}
	}
	return false
}

// give returns a slot to the budget.
func (m *member) give(idx int) {
	b := m.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.free = append(b.free, idx)
	m.held--
	b.wake()
}

// leave ends the member: it must hold no slot.
func (m *member) leave() error {
	m.want(false)
	b := m.b
	b.mu.Lock()
	for i, o := range b.members {
		if o == m {
			b.members = append(b.members[:i], b.members[i+1:]...)
			break
		}
	}
	b.mu.Unlock()
	if m.held != 0 {
		return fmt.Errorf("engine: a copy left its budget holding %d slots", m.held)
	}
	return nil
}

// look is the budget's window now, and a channel closed at its next
// change (a slot given back, the window changed, Wake): taken before a
// copy looks at what it waits for, it cannot miss a change that comes in
// between.
func (m *member) look() (Window, <-chan struct{}) {
	m.b.mu.Lock()
	defer m.b.mu.Unlock()
	return m.b.window, m.b.changed
}

// report hands what the member's copy measured to the budget, and the
// sample to the controller when one is due.
func (m *member) report(mt *meter, now time.Time) {
	ctrl, s, due := m.b.samples.add(mt, &m.sampled, now)
	*mt = meter{last: now}
	if due {
		ctrl.Observe(s)
	}
}

// wait blocks, after take failed, until a slot may be free for the
// member, or ctx ends.
func (m *member) wait(ctx context.Context) {
	select {
	case <-m.refused:
	case <-ctx.Done():
	}
}
