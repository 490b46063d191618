package qcow2

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// A request's compressed clusters are decompressed on every core, not
// only on the goroutine that reads them: the engine keeps as many
// requests in flight as the disk wants (its good neighbour may cut that
// to one while others use the disk), and one request of compressed
// clusters is CPU, not disk. So a batch's clusters are shared between
// the reader and helpers, one per idle core at most: helpers is a
// process-wide count of them, GOMAXPROCS-1, taken without waiting. When
// every core already decompresses for a reader of its own (the pool's
// workers, many requests in flight) no helper starts, and each reader
// decompresses its own clusters as before. A helper holds no memory of
// its own but a cluster buffer for a cluster read in part (getBuf).
var helpers = sync.OnceValue(func() chan struct{} {
	return make(chan struct{}, max(runtime.GOMAXPROCS(0)-1, 0))
})

// inflateAll runs do(i) for i in [0, n), on the caller and on the
// helpers it can get, and returns the error of the lowest i that failed
// (the one a reader in order would have met first).
func inflateAll(n int, do func(i int) error) error {
	if n == 1 {
		return do(0)
	}
	var (
		next   atomic.Int64
		mu     sync.Mutex
		failed = n // the lowest i that failed
		first  error
		wg     sync.WaitGroup
	)
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			mu.Lock()
			stop := i > failed
			mu.Unlock()
			if stop {
				return
			}
			if err := do(i); err != nil {
				mu.Lock()
				if i < failed {
					failed, first = i, err
				}
				mu.Unlock()
			}
		}
	}
	for i := 1; i < n && help(&wg, work); i++ {
	}
	work()
	wg.Wait()
	return first
}

// help starts work on a helper when one is idle, and says whether it did.
func help(wg *sync.WaitGroup, work func()) bool {
	h := helpers()
	select {
	case h <- struct{}{}:
	default:
		return false
	}
	wg.Add(1)
	go func() {
		defer func() { <-h; wg.Done() }()
		work()
	}()
	return true
}
