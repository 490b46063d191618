package blkhash

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ringcp/ringcp/internal/zeros"
)

// Hasher computes an image's checksum from its data and its zero ranges,
// given in any order, hashing on worker goroutines: BLAKE2b runs at about
// the speed of a disk on one core, so the caller (the engine's thread)
// only copies a block and goes on. Blocks of zeros are not hashed at all.
type Hasher struct {
	sum   *Sum
	work  chan block
	free  chan []byte
	wg    sync.WaitGroup
	mu    sync.Mutex
	err   error
	once  sync.Once
	spare int // buffers that may still be made
}

type block struct {
	i   int64
	buf []byte
}

// NewHasher starts the checksum of an image of size bytes with workers
// goroutines (0: one per CPU). Each worker holds at most two blocks of
// buffer (8 MiB).
func NewHasher(size int64, workers int) *Hasher {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	h := &Hasher{sum: New(size), work: make(chan block, workers), free: make(chan []byte, 2*workers), spare: 2 * workers}
	for range workers {
		h.wg.Add(1)
		go h.worker()
	}
	return h
}

func (h *Hasher) worker() {
	defer h.wg.Done()
	for b := range h.work {
		h.sum.Block(b.i, BlockDigest(b.buf))
		h.free <- b.buf[:cap(b.buf)]
	}
}

// Data hashes data, the image's bytes from offset off: off is a multiple
// of BlockSize, and data holds whole blocks, or ends where the image does.
// data is copied: the caller may reuse it on return. Data waits when every
// worker is busy with two blocks. Data and Zero are called from one
// goroutine at a time.
func (h *Hasher) Data(off int64, data []byte) {
	if off%BlockSize != 0 || (len(data)%BlockSize != 0 && off+int64(len(data)) != h.sum.size) {
		h.fail(fmt.Errorf("blkhash: data %d+%d does not cover whole blocks of an image of %d bytes", off, len(data), h.sum.size))
		return
	}
	for len(data) > 0 {
		n := min(len(data), BlockSize)
		h.block(off/BlockSize, data[:n])
		data, off = data[n:], off+int64(n)
	}
}

// block hands one block to a worker, or records a zero block at once.
func (h *Hasher) block(i int64, b []byte) {
	if zeros.Is(b) {
		h.sum.Zeros(i, 1)
		return
	}
	buf := h.buffer()
	h.work <- block{i: i, buf: buf[:copy(buf, b)]}
}

// buffer takes a free block buffer, making one while fewer than the
// limit exist.
func (h *Hasher) buffer() []byte {
	select {
	case buf := <-h.free:
		return buf
	default:
	}
	if h.spare > 0 {
		h.spare--
		return make([]byte, BlockSize)
	}
	return <-h.free
}

// Zero records that [off, off+n) holds only zeros: off is a multiple of
// BlockSize, and the range covers whole blocks or ends where the image
// does.
func (h *Hasher) Zero(off, n int64) {
	if off%BlockSize != 0 || (n%BlockSize != 0 && off+n != h.sum.size) {
		h.fail(fmt.Errorf("blkhash: zeros %d+%d do not cover whole blocks of an image of %d bytes", off, n, h.sum.size))
		return
	}
	h.sum.Zeros(off/BlockSize, Blocks(n))
}

func (h *Hasher) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.err = err
	}
}

// Close stops the workers once the blocks handed over are hashed. Result
// calls it; a caller that abandons the checksum calls it alone.
func (h *Hasher) Close() {
	h.once.Do(func() {
		close(h.work)
		h.wg.Wait()
	})
}

// Result waits for the workers and returns the checksum. It fails when a
// block is missing or was given twice or in pieces.
func (h *Hasher) Result() (Result, error) {
	h.Close()
	h.mu.Lock()
	err := h.err
	h.mu.Unlock()
	if err != nil {
		return Result{}, err
	}
	return h.sum.Result()
}
