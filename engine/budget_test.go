package engine

import (
	"context"
	"testing"
	"time"
)

func testBudget(n int) *Budget {
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, 4096)
	}
	return NewBudget(bufs)
}

// TestBudgetShares: one copy alone gets every slot; two that want slots
// get half each; one that stops wanting leaves its share to the other;
// SetWindow bounds what is out.
func TestBudgetShares(t *testing.T) {
	b := testBudget(8)
	a := b.join()
	all := takeAll(a)
	if len(all) != 8 {
		t.Fatalf("alone: took %d slots, want 8", len(all))
	}
	give(a, all)
	c := b.join()
	ha, hc := takeAll(a), takeAll(c)
	if len(ha) != 4 || len(hc) != 4 {
		t.Fatalf("two wanting: %d and %d slots, want 4 and 4", len(ha), len(hc))
	}
	c.want(false)
	if more := takeAll(a); len(more) != 0 {
		t.Fatalf("all slots out, yet %d more taken", len(more))
	}
	give(c, hc)
	more := takeAll(a)
	if len(more) != 4 {
		t.Fatalf("the other stopped wanting: took %d more, want 4", len(more))
	}
	give(a, append(ha, more...))
	if err := c.leave(); err != nil {
		t.Fatal(err)
	}
	b.SetWindow(Window{Depth: 3})
	three := takeAll(a)
	if len(three) != 3 {
		t.Fatalf("depth 3: took %d", len(three))
	}
	give(a, three)
	if err := a.leave(); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetWaitWakes: a member refused a slot wakes when one is given
// back, also when that happened between the refusal and the wait.
func TestBudgetWaitWakes(t *testing.T) {
	b := testBudget(1)
	a, c := b.join(), b.join()
	idx, ok := a.take()
	if !ok {
		t.Fatal("no slot for the first member")
	}
	if _, ok := c.take(); ok {
		t.Fatal("a second slot out of a budget of one")
	}
	a.give(idx) // before c waits
	done := make(chan struct{})
	go func() { c.wait(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("wait missed a slot given back before it began")
	}
}

func takeAll(m *member) []int {
	var got []int
	for {
		idx, ok := m.take()
		if !ok {
			return got
		}
		got = append(got, idx)
	}
}

func give(m *member, idxs []int) {
	for _, i := range idxs {
		m.give(i)
	}
}

// TestBudgetTakesTurns: with more copies than slots, a copy that gives a
// slot back does not take it again while one that holds as many waits,
// and those waiting get it in the order they began to wait.
func TestBudgetTakesTurns(t *testing.T) {
	b := testBudget(1)
	a, c, d := b.join(), b.join(), b.join()
	idx, ok := a.take()
	if !ok {
		t.Fatal("no slot for the first copy")
	}
	if _, ok := c.take(); ok {
		t.Fatal("a second slot out of a budget of one")
	}
	if _, ok := d.take(); ok {
		t.Fatal("a second slot out of a budget of one")
	}
	a.give(idx)
	if _, ok := a.take(); ok {
		t.Fatal("the copy that gave the slot back took it again before those waiting")
	}
	if _, ok := d.take(); ok {
		t.Fatal("the copy that began to wait second took the slot before the first")
	}
	if _, ok := c.take(); !ok {
		t.Fatal("the copy that waited longest was refused")
	}
}
