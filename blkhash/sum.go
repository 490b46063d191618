package blkhash

import (
	"encoding/hex"
	"fmt"
	"hash"
	"sync"

	"golang.org/x/crypto/blake2b"
)

// The checksum's parameters, as imageio names them.
const (
	Algorithm  = "blake2b"
	BlockSize  = 4 << 20
	DigestSize = 32
)

// Result is the checksum as imageio's API returns it, field for field:
// {"algorithm": "blake2b", "block_size": 4194304, "checksum": "<hex>"}.
type Result struct {
	Algorithm string `json:"algorithm"`
	BlockSize int    `json:"block_size"`
	Checksum  string `json:"checksum"`
}

// Digest is one block's digest.
type Digest = [DigestSize]byte

// BlockDigest hashes one block: BLAKE2b-256 of its bytes as they are.
func BlockDigest(b []byte) Digest { return blake2b.Sum256(b) }

// zeroBlock is the digest of a whole block of zeros, computed once.
var zeroBlock = sync.OnceValue(func() Digest { return zeroDigest(BlockSize) })

// ZeroDigest is the digest of n zero bytes (a whole block, or a short last
// one), the same as BlockDigest of that many zeros, without the reading.
func ZeroDigest(n int) Digest {
	if n == BlockSize {
		return zeroBlock()
	}
	return zeroDigest(n)
}

func zeroDigest(n int) Digest {
	h, _ := blake2b.New256(nil)
	for n > 0 {
		k := min(n, len(zeroPage))
		h.Write(zeroPage[:k])
		n -= k
	}
	var d Digest
	h.Sum(d[:0])
	return d
}

// zeros is read-only: a source of zero bytes to hash and compare with.
var zeroPage [64 << 10]byte

// Sum assembles an image's block digests into its checksum. Digests may
// arrive in any order and from several goroutines: the outer hash takes
// each as soon as every block before it is in, so only the blocks that
// arrived early are held (about a queue depth of them).
type Sum struct {
	mu      sync.Mutex
	size    int64
	outer   hash.Hash
	next    int64            // the block the outer hash takes next
	early   map[int64]Digest // blocks that arrived before their turn
	zeroRun map[int64]int64  // zero runs that did: first block -> count
	err     error
}

// New starts the checksum of an image of size bytes.
func New(size int64) *Sum {
	outer, _ := blake2b.New256(nil)
	return &Sum{size: size, outer: outer, early: map[int64]Digest{}, zeroRun: map[int64]int64{}}
}

// Blocks is how many blocks an image of size bytes has.
func Blocks(size int64) int64 { return (size + BlockSize - 1) / BlockSize }

// blockLen is the length of block i: BlockSize, or less for the last.
func (s *Sum) blockLen(i int64) int {
	return int(min(BlockSize, s.size-i*BlockSize))
}

// Block records block i's digest.
func (s *Sum) Block(i int64, d Digest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fits(i, 1) {
		return
	}
	s.early[i] = d
	s.drain()
}

// Zeros records that blocks [i, i+count) hold only zeros.
func (s *Sum) Zeros(i, count int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if count <= 0 || !s.fits(i, count) {
		return
	}
	s.zeroRun[i] = count
	s.drain()
}

// fits checks that blocks [i, i+count) are in the image and not given
// before; a caller's mistake is kept and returned by Result.
func (s *Sum) fits(i, count int64) bool {
	_, dup := s.early[i]
	_, dupZero := s.zeroRun[i]
	if i < s.next || dup || dupZero || count > Blocks(s.size)-i {
		if s.err == nil {
			s.err = fmt.Errorf("blkhash: blocks %d+%d given twice or outside an image of %d blocks", i, count, Blocks(s.size))
		}
		return false
	}
	return true
}

// drain feeds the outer hash every block that is in, in order.
func (s *Sum) drain() {
	for {
		if d, ok := s.early[s.next]; ok {
			delete(s.early, s.next)
			s.outer.Write(d[:])
			s.next++
			continue
		}
		n, ok := s.zeroRun[s.next]
		if !ok {
			return
		}
		delete(s.zeroRun, s.next)
		for range n {
			d := ZeroDigest(s.blockLen(s.next))
			s.outer.Write(d[:])
			s.next++
		}
	}
}

// Result is the checksum, once every block is in.
func (s *Sum) Result() (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return Result{}, s.err
	}
	if s.next != Blocks(s.size) {
		return Result{}, fmt.Errorf("blkhash: block %d of %d is missing", s.next, Blocks(s.size))
	}
	return Result{Algorithm: Algorithm, BlockSize: BlockSize, Checksum: hex.EncodeToString(s.outer.Sum(nil))}, nil
}
