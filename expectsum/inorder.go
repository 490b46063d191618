package expectsum

import (
	"errors"
	"fmt"
	"hash"
	"sync"
)

// IncompleteError: Verify was asked before every byte was hashed (a
// range never came, came twice, or the read did not reach the end).
type IncompleteError struct {
	Hashed int64 // bytes hashed in order from the start
	Size   int64 // bytes expected (-1: until the end of a stream)
}

func (e *IncompleteError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("checksum over %d bytes only: the source was not read to its end", e.Hashed)
	}
	return fmt.Sprintf("checksum over the first %d bytes of %d only: a range is missing", e.Hashed, e.Size)
}

// ErrTwice is Write's answer to a range that starts before the hashed
// frontier or where another parked range starts.
var ErrTwice = errors.New("range given twice")

// InOrder hashes ranges given in any order as the one stream they make
// up. Write and Zero may be called from many goroutines at once.
type InOrder struct {
	e      Expect
	window int64

	mu      sync.Mutex
	moved   sync.Cond // the frontier moved, or the hasher aborted
	h       hash.Hash
	next    int64            // the frontier: bytes before it are hashed or being hashed
	parked  map[int64]parked // ranges ahead of the frontier, by offset
	held    int64            // bytes of copies parked
	hashing bool             // a writer owns the hash and drains parked ranges
	err     error
}

// parked is a range ahead of the frontier: a copy of its bytes, or a run
// of zeros (no copy).
type parked struct {
	data  []byte
	zeros int64
}

func (p parked) len() int64 { return int64(len(p.data)) + p.zeros }

// NewInOrder is a hasher for e whose parked copies hold at most window
// bytes (a range larger than the window waits until it is next).
func NewInOrder(e Expect, window int64) *InOrder {
	h := &InOrder{e: e, window: window, h: e.New(), parked: map[int64]parked{}}
	h.moved.L = &h.mu
	return h
}

// Write hands over the range [off, off+len(p)). It returns once p is
// hashed or copied: the caller may reuse p. It waits while the range is
// ahead of the frontier and the window is full, so every range before
// it must be given by another goroutine (as a copy's slots do, handing
// out ranges in order); Abort ends the wait.
func (h *InOrder) Write(off int64, p []byte) error {
	return h.give(off, parked{data: p})
}

// Zero hands over n zero bytes at off (a hole of the source, never read).
func (h *InOrder) Zero(off, n int64) error {
	return h.give(off, parked{zeros: n})
}

func (h *InOrder) give(off int64, r parked) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	if r.len() == 0 {
		return nil
	}
	if _, dup := h.parked[off]; off < h.next || dup {
		return fmt.Errorf("offset %d (hashed up to %d): %w", off, h.next, ErrTwice)
	}
	for (off != h.next || h.hashing) && h.held+int64(len(r.data)) > h.window && h.err == nil {
		h.moved.Wait()
	}
	if h.err != nil {
		return h.err
	}
	if off != h.next || h.hashing {
		if r.data != nil {
			r.data = append([]byte(nil), r.data...)
		}
		h.parked[off] = r
		h.held += int64(len(r.data))
		return nil
	}
	h.hashing = true
	for {
		h.next += r.len()
		h.mu.Unlock()
		hashRange(h.h, r)
		h.mu.Lock()
		var ok bool
		if r, ok = h.parked[h.next]; !ok {
			break
		}
		delete(h.parked, h.next)
		h.held -= int64(len(r.data))
	}
	h.hashing = false
	h.moved.Broadcast()
	return nil
}

// zeroBlock is what runs of zeros are hashed from.
var zeroBlock [64 << 10]byte

func hashRange(h hash.Hash, r parked) {
	h.Write(r.data)
	for n := r.zeros; n > 0; n -= int64(len(zeroBlock)) {
		h.Write(zeroBlock[:min(n, int64(len(zeroBlock)))])
	}
}

// Abort wakes every waiting Write with err and makes later ones fail: the
// copy failed, the ranges before them will not come.
func (h *InOrder) Abort(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.err = err
	}
	h.moved.Broadcast()
}

// Hashed is the frontier: bytes hashed in order from the start.
func (h *InOrder) Hashed() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next
}

// Verify compares the digest of the size bytes with the expected one,
// once every range was given: an *IncompleteError if a byte is missing,
// a *MismatchError if they differ.
func (h *InOrder) Verify(size int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	if h.next != size || len(h.parked) > 0 || h.hashing {
		return &IncompleteError{Hashed: h.next, Size: size}
	}
	return h.e.check(h.h, size)
}
