package copier

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
)

// NewTestSum is newCellSums for copier's external tests.
var NewTestSum = newCellSums

// cellSums is a BlockSum for tests: a SHA-256 of every cell, in order.
type cellSums struct {
	mu    sync.Mutex
	cells map[int64][]byte
}

func newCellSums(int64) BlockSum { return &cellSums{cells: map[int64][]byte{}} }

func (c *cellSums) Data(off int64, data []byte) {
	for len(data) > 0 {
		n := min(len(data), CellSize)
		h := sha256.Sum256(data[:n])
		c.mu.Lock()
		c.cells[off] = h[:]
		c.mu.Unlock()
		off, data = off+int64(n), data[n:]
	}
}

func (c *cellSums) Zero(off, n int64) {
	for ; n > 0; off, n = off+CellSize, n-CellSize {
		c.Data(off, make([]byte, min(n, CellSize)))
	}
}

func (c *cellSums) Sum() (ChecksumResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	offs := make([]int64, 0, len(c.cells))
	for off := range c.cells {
		offs = append(offs, off)
	}
	slices.Sort(offs)
	h := sha256.New()
	for _, off := range offs {
		h.Write(c.cells[off])
	}
	return ChecksumResult{Algorithm: "sha256-cells", BlockSize: CellSize, Checksum: hex.EncodeToString(h.Sum(nil))}, nil
}

func (c *cellSums) Close() {}
