package qcow2

import (
	"encoding/binary"
	"testing"
)

// TestExtendedL2SmallClusters: extended L2 entries with clusters below
// 16 KiB (subclusters smaller than a sector) are refused, as QEMU
// refuses them; at 16 KiB they are read.
func TestExtendedL2SmallClusters(t *testing.T) {
	for _, c := range []struct {
		bits uint32
		ok   bool
	}{{9, false}, {13, false}, {14, true}} {
		b := tinyImage(c.bits, incompatExtendedL2)
		im, err := Open(&memFile{b: b}, Options{})
		switch {
		case c.ok && err != nil:
			t.Errorf("cluster_bits %d: %v", c.bits, err)
		case !c.ok && !isCause(err, ErrMalformed):
			t.Errorf("cluster_bits %d with extended L2: %v; want ErrMalformed", c.bits, err)
		}
		if err == nil {
			im.Close()
		}
	}
}

// tinyImage is a valid empty version 3 image of one cluster's virtual
// size: header, L1 table, refcount table, one cluster each.
func tinyImage(bits uint32, incompat uint64) []byte {
	cs := 1 << bits
	b := make([]byte, 3*cs)
	be := binary.BigEndian
	be.PutUint32(b[0:], magic)
	be.PutUint32(b[4:], 3)
	be.PutUint32(b[20:], bits)
	be.PutUint64(b[24:], uint64(cs))
	be.PutUint32(b[36:], 1)
	be.PutUint64(b[40:], uint64(cs))
	be.PutUint64(b[48:], uint64(2*cs))
	be.PutUint32(b[56:], 1)
	be.PutUint64(b[72:], incompat)
	be.PutUint32(b[96:], 4)
	be.PutUint32(b[100:], headerV3Min)
	return b
}
