package syncproto

import (
	"context"
	"sync"
)

// inOrder is how both sides read their end: windows of [0, size) are
// read and hashed by several workers at once (large reads at the disk's
// full depth), and their results handed to deliver one at a time, in
// order (the protocol is a stream). work makes each worker's function;
// deliver runs on the caller's goroutine. At most workers+1 windows are
// between read and delivered. It returns deliver's or a worker's first
// error, or why ctx ended; it never returns before its goroutines did.
func inOrder[R any](ctx context.Context, size, window int64, workers int,
	work func() func(off, n int64) (R, error), deliver func(off, n int64, r R) error) error {
	type job struct {
		off, n int64
		res    R
		err    error
		done   chan struct{}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	order := make(chan *job, workers)
	jobs := make(chan *job)
	for range workers {
		fn := work()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.res, j.err = fn(j.off, j.n)
				close(j.done)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		defer close(order)
		for off := int64(0); off < size; off += window {
			j := &job{off: off, n: min(window, size-off), done: make(chan struct{})}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	for j := range order {
		select {
		case <-j.done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if j.err != nil {
			return j.err
		}
		if err := deliver(j.off, j.n, j.res); err != nil {
			return err
		}
	}
	return context.Cause(ctx) // nil, unless ctx ended and cut the windows short
}
