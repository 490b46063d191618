package blocksync

import (
	"bytes"
	"fmt"

	"github.com/ringcp/ringcp/internal/zeros"
)

// Granule sizes. 4 KiB is the default: the block that filesystems and
// guests write, so that a changed 4 KiB block costs 4 KiB written, not
// the 64 KiB granule that holds it (with 1% of the blocks changed at
// random, a 64 KiB granule wrote 14.8 times the changed bytes). Locally
// both ends are compared in memory, so the granule costs nothing but the
// number of writes; across hosts the digest stream grows as the granule
// shrinks (32 bytes per granule: 0.8% of SRC at 4 KiB, 0.05% at 64 KiB),
// which is less than the bytes a larger granule sends once more than
// about one block in two thousand changed at random. 64 KiB is the most
// (a qcow2's default cluster, the granule of its dirty bitmaps), 512 the
// least, a sector.
const (
	DefaultGranule = 4 << 10
	MaxGranule     = 64 << 10
	MinGranule     = 512
)

// CheckGranule refuses a granule that is not a power of two from
// MinGranule to MaxGranule.
func CheckGranule(g int) error {
	if g < MinGranule || g > MaxGranule || g&(g-1) != 0 {
		return refuse(KindBadInput, "", fmt.Sprintf("granule %d: want a power of two from %d to %d", g, MinGranule, MaxGranule), nil)
	}
	return nil
}

// Granules is how many granules of g bytes cover size bytes (the last
// may be short).
func Granules(size int64, g int) int64 { return (size + int64(g) - 1) / int64(g) }

// Change is a run of granules that DST must get from SRC: written from
// SRC's bytes, or zeroed when Zero (SRC's bytes there are all zeros).
type Change struct {
	Off  int64
	Len  int64
	Zero bool
}

// Compare compares one window of SRC with the same window of DST,
// granule by granule from the window's start (which must be a multiple
// of g from the end's start, as every window is), and appends to out the
// runs of granules that differ, neighbours of the same kind merged. off
// is the window's offset in the ends; len(dst) must equal len(src) (the
// caller fills with zeros what lies past DST's end). It reads nothing
// else and writes nothing: the engine's window and Sync's both come
// through here.
func Compare(off int64, src, dst []byte, g int, out []Change) []Change {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("blocksync.Compare: %d bytes of SRC against %d of DST", len(src), len(dst)))
	}
	if bytes.Equal(src, dst) {
		return out // the common case, at memory speed
	}
	for i := 0; i < len(src); i += g {
		end := min(i+g, len(src))
		s := src[i:end]
		if bytes.Equal(s, dst[i:end]) {
			continue
		}
		out = appendChange(out, Change{Off: off + int64(i), Len: int64(end - i), Zero: zeros.Is(s)})
	}
	return out
}

// appendChange appends c, merging it into the last change when they
// touch and are of the same kind.
func appendChange(out []Change, c Change) []Change {
	if k := len(out) - 1; k >= 0 && out[k].Off+out[k].Len == c.Off && out[k].Zero == c.Zero {
		out[k].Len += c.Len
		return out
	}
	return append(out, c)
}
