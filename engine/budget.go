package engine

import (
	"context"
	"fmt"
	"sync"
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
// The depth (slots out at once) can be lowered and raised while copies
// run (SetDepth), by a caller that backs off under pressure.
type Budget struct {
	bufs [][]byte

	mu       sync.Mutex
	free     []int         // buffer indexes not held by a copy
	depth    int           // slots that may be out (len(bufs)-len(free)) at once
	wanting  int           // members that have chunks left to plan
	members  []*member     // joined and not left
	changed  chan struct{} // closed, and replaced, when a slot frees or the depth rises
	refusals uint64        // counts refusals, to order the members waiting
}

// NewBudget makes a budget of the buffers (align.AllocBuffers' slots, all
// the same size), with a depth of all of them.
func NewBudget(bufs [][]byte) *Budget {
	b := &Budget{bufs: bufs, depth: len(bufs), changed: make(chan struct{})}
	for i := len(bufs) - 1; i >= 0; i-- {
		b.free = append(b.free, i)
	}
	return b
}

// Buffers are every slot's buffer, indexed by slot: what a backend
// registers.
func (b *Budget) Buffers() [][]byte { return b.bufs }

// Depth is how many slots may be out at once now.
func (b *Budget) Depth() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.depth
}

// SetDepth changes how many slots may be out at once, from 1 to all of
// them. Lowering it takes effect as copies give slots back; nothing in
// flight is cut short.
func (b *Budget) SetDepth(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.depth = min(max(n, 1), len(b.bufs))
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
	return (b.depth + n - 1) / n
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
	if len(b.free) == 0 || len(b.bufs)-len(b.free) >= b.depth || m.held >= b.share() || b.owedElsewhere(m) {
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

// wait blocks, after take failed, until a slot may be free for the
// member, or ctx ends.
func (m *member) wait(ctx context.Context) {
	select {
	case <-m.refused:
	case <-ctx.Done():
	}
}
