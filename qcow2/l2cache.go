package qcow2

import (
	"encoding/binary"
	"sync"
)

// l2Cache keeps recently used L2 tables, decoded, keyed by their host
// offset, within a budget of bytes. It is split in shards so that many
// readers rarely meet on one lock, and evicts first in, first out: a copy
// walks the tables in order and comes back to few of them.
type l2Cache struct {
	shards [l2Shards]l2Shard
}

const l2Shards = 16

type l2Shard struct {
	mu    sync.Mutex
	m     map[uint64][]uint64
	order []uint64 // ring of keys in the order they came in
	next  int      // where the next key goes in order
}

// newL2Cache holds about budget bytes of tables of tableBytes each, and
// at least one table per shard.
func newL2Cache(budget, tableBytes int64) *l2Cache {
	perShard := max(int(budget/tableBytes/l2Shards), 1)
	c := &l2Cache{}
	for i := range c.shards {
		c.shards[i].m = make(map[uint64][]uint64, perShard)
		c.shards[i].order = make([]uint64, 0, perShard)
	}
	return c
}

func (c *l2Cache) shard(off uint64) *l2Shard {
	// Tables are cluster-aligned: mix the bits above the smallest
	// cluster size.
	return &c.shards[(off>>9^off>>17)%l2Shards]
}

// get is the table at off, or nil.
func (c *l2Cache) get(off uint64) []uint64 {
	s := c.shard(off)
	s.mu.Lock()
	t := s.m[off]
	s.mu.Unlock()
	return t
}

// put adds a table (which is never changed afterwards: readers share it).
func (c *l2Cache) put(off uint64, t []uint64) {
	s := c.shard(off)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[off]; ok {
		return // another reader loaded it meanwhile
	}
	if len(s.order) < cap(s.order) {
		s.order = append(s.order, off)
	} else {
		delete(s.m, s.order[s.next])
		s.order[s.next] = off
		s.next = (s.next + 1) % len(s.order)
	}
	s.m[off] = t
}

// decodeTable turns a big-endian table into its entries.
func decodeTable(b []byte) []uint64 {
	t := make([]uint64, len(b)/8)
	for i := range t {
		t[i] = binary.BigEndian.Uint64(b[i*8:])
	}
	return t
}
