package unpack

import (
	"encoding/binary"
	"hash/crc64"
	"sync"

	"github.com/ringcp/ringcp/internal/zeros"
)

// crc64Zeros is xz's CRC64 check (ECMA-182, as hash/crc64 computes it)
// that adds runs of zeros without reading them byte by byte: a CRC's
// register after n zero bytes is a linear function of the register
// before, so it is one product with a 64×64 bit matrix per set bit of n
// (zeroOps). hash/crc64 has no vector code and costs about as much per
// byte as decoding a run of zeros; a disk image is mostly zeros.
type crc64Zeros struct {
	crc     uint64
	pending int64 // zero bytes not yet added to crc
}

// crcZeroPiece is the size of the pieces looked at for zeros: a piece
// with any non-zero byte goes through hash/crc64 whole.
const crcZeroPiece = 4096

func (c *crc64Zeros) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), crcZeroPiece)
		if zeros.Is(p[:k]) {
			c.pending += int64(k)
		} else {
			c.flush()
			c.crc = crc64.Update(c.crc, crc64Table, p[:k])
		}
		p = p[k:]
	}
	return n, nil
}

// flush adds the pending zeros to the CRC.
func (c *crc64Zeros) flush() {
	if c.pending == 0 {
		return
	}
	ops := zeroOps()
	reg := ^c.crc
	for k := 0; c.pending != 0; k++ {
		if c.pending&1 != 0 {
			reg = ops[k].apply(reg)
		}
		c.pending >>= 1
	}
	c.crc = ^reg
}

func (c *crc64Zeros) Sum64() uint64 {
	c.flush()
	return c.crc
}

func (c *crc64Zeros) Sum(b []byte) []byte { return binary.BigEndian.AppendUint64(b, c.Sum64()) }
func (c *crc64Zeros) Reset()              { *c = crc64Zeros{} }
func (c *crc64Zeros) Size() int           { return crc64.Size }
func (c *crc64Zeros) BlockSize() int      { return 1 }

// crcMatrix is a linear map of a CRC register: column i is the image of
// bit i.
type crcMatrix [64]uint64

func (m *crcMatrix) apply(v uint64) uint64 {
	var out uint64
	for i := 0; v != 0; i++ {
		if v&1 != 0 {
			out ^= m[i]
		}
		v >>= 1
	}
	return out
}

// times is m after n: n's map, then m's.
func (m *crcMatrix) times(n *crcMatrix) crcMatrix {
	var out crcMatrix
	for i := range out {
		out[i] = m.apply(n[i])
	}
	return out
}

// zeroOps()[k] is what 2^k zero bytes do to the (inverted) register,
// made at first use.
var zeroOps = sync.OnceValue(func() (ops *[63]crcMatrix) {
	ops = new([63]crcMatrix)
	// One zero bit: shift right, and add the reflected polynomial when
	// the bit shifted out was set.
	var bit crcMatrix
	bit[0] = crc64.ECMA
	for i := 1; i < 64; i++ {
		bit[i] = 1 << (i - 1)
	}
	m := bit
	for range 3 { // 8 bits
		m = m.times(&m)
	}
	ops[0] = m
	for k := 1; k < len(ops); k++ {
		ops[k] = ops[k-1].times(&ops[k-1])
	}
	return ops
})
