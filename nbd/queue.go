package nbd

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// queue holds completions until Reap takes them. Readers push without
// ever blocking, so a caller slow to reap never stalls the connections.
type queue struct {
	mu       sync.Mutex
	items    []Completion
	inflight int           // Submitted requests whose completion is not queued yet
	wake     chan struct{} // a token when items grew
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

func (q *queue) submitted() {
	q.mu.Lock()
	q.inflight++
	q.mu.Unlock()
}

// unsubmit takes back a request Submit refused after counting it.
func (q *queue) unsubmit() {
	q.mu.Lock()
	q.inflight--
	q.mu.Unlock()
}

func (q *queue) push(c Completion) {
	q.mu.Lock()
	q.items = append(q.items, c)
	q.inflight--
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// reap waits until atLeast completions are queued (or timeout passes, when
// positive) and moves up to len(out) of them into out. Asking for more
// than could ever come is an error rather than a hang.
func (q *queue) reap(out []Completion, atLeast int, timeout time.Duration) (int, error) {
	if atLeast > len(out) {
		atLeast = len(out)
	}
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	for {
		q.mu.Lock()
		have, pending := len(q.items), q.inflight
		if have >= atLeast || have+pending < atLeast {
			n := copy(out, q.items)
			q.items = append(q.items[:0], q.items[n:]...)
			q.mu.Unlock()
			if n < atLeast {
				return n, fmt.Errorf("nbd: waiting for %d completions with %d queued and %d in flight", atLeast, have, pending)
			}
			return n, nil
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-expire:
			n, _ := q.reap(out, 0, 0)
			return n, os.ErrDeadlineExceeded
		}
	}
}
