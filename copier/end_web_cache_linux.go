package copier

import (
	"io"
	"sync"

	"github.com/ringcp/ringcp/qcow2"
)

// objectCache is an HTTP or S3 object read at offsets, as the web kind
// hands it to the copy and to a format over it: every read is one of the
// object's pinned range requests (If-Range/If-Match, retried as the data
// ranges are), except the metadata an image announces (qcow2.Prefetcher):
// those are fetched at once, in parallel over the object's connections,
// and kept, so that the walk of an image's L2 tables costs a round trip
// or two instead of one per table, and so that the image opened again
// (Prepare checks it, maps it, Run opens it) costs none. The first bytes
// (an image's header, read at offset 0) are kept too. What is kept came
// from the pinned object: a changed object fails the reads that are not
// kept, and the copy with them.
//
// The data a copy reads (whole blocks, a raw object's or an image's
// clusters) passes through: the engine's requests in flight are the
// parallel ranges.
type objectCache struct {
	at    io.ReaderAt
	size  int64
	conns int

	mu     sync.Mutex
	kept   map[int64][]byte // by offset: the bytes from there
	bytes  int64
	budget int64
}

var _ qcow2.Prefetcher = (*objectCache)(nil)

// objectCacheBudget bounds what an object's cache keeps: the L2 tables
// of a 512 GiB image with 64 KiB clusters (1/8192 of its guest's size).
// Tables past it are read when the walk meets them, one round trip each.
const objectCacheBudget = 64 << 20

// headKeep is the most a read at offset 0 keeps: qcow2 reads its header
// as the first cluster of the largest size (2 MiB), and every Open
// (sniffing the format, checking, mapping, running) reads it again.
const headKeep = 2 << 20

func newObjectCache(at io.ReaderAt, size int64, conns int) *objectCache {
	return &objectCache{at: at, size: size, conns: max(conns, 1), kept: map[int64][]byte{}, budget: objectCacheBudget}
}

// ReadAt answers from what is kept at off when it holds all of p, else
// asks the object (keeping a read of its first bytes).
func (c *objectCache) ReadAt(p []byte, off int64) (int, error) {
	if b := c.get(off); len(p) <= len(b) {
		return copy(p, b), nil
	}
	n, err := c.at.ReadAt(p, off)
	if off == 0 && len(p) <= headKeep && n > 0 && (err == nil || n == int(min(int64(len(p)), c.size))) {
		c.keep(0, append([]byte(nil), p[:n]...))
	}
	return n, err
}

func (c *objectCache) get(off int64) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept[off]
}

// keep stores b at off, within the budget; a longer piece replaces a
// shorter one.
func (c *objectCache) keep(off int64, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.kept[off]
	if len(b) <= len(old) || c.bytes-int64(len(old))+int64(len(b)) > c.budget {
		return
	}
	c.kept[off] = b
	c.bytes += int64(len(b)) - int64(len(old))
}

// Prefetch fetches the ranges not kept yet, inside the object and within
// the budget, the object's connections' worth at a time, and keeps them.
// A range that fails is left out: the read that wants it asks again, and
// fails the way every read does.
func (c *objectCache) Prefetch(ranges []qcow2.Range) {
	todo := c.missing(ranges)
	work := make(chan qcow2.Range)
	var wg sync.WaitGroup
	for range min(c.conns, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				b := make([]byte, r.Len)
				if n, err := c.at.ReadAt(b, r.Off); n == len(b) && (err == nil || err == io.EOF) {
					c.keep(r.Off, b)
				}
			}
		}()
	}
	for _, r := range todo {
		work <- r
	}
	close(work)
	wg.Wait()
}

// missing is the ranges to fetch: inside the object (clipped to its
// end), not kept already, first come first taken within the budget.
func (c *objectCache) missing(ranges []qcow2.Range) []qcow2.Range {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.budget - c.bytes
	var todo []qcow2.Range
	seen := map[int64]bool{}
	for _, r := range ranges {
		if r.Off < 0 || r.Len <= 0 || r.Off >= c.size || seen[r.Off] {
			continue
		}
		r.Len = min(r.Len, c.size-r.Off)
		if int64(len(c.kept[r.Off])) >= r.Len {
			continue
		}
		if r.Len > room {
			break
		}
		room -= r.Len
		seen[r.Off] = true
		todo = append(todo, r)
	}
	return todo
}
