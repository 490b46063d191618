package align

import (
	"math"
	"strings"
	"testing"
)

// TestChooseHugeSource: a sparse file may be 8 EiB long (XFS and btrfs
// allow sizes up to math.MaxInt64). Rounding its size up used to wrap
// negative: ringcp printed "queue depth -1099511627775". The choice must
// be the default one, with sane reasons.
func TestChooseHugeSource(t *testing.T) {
	for _, size := range []int64{math.MaxInt64, math.MaxInt64 - 1, 9223372036854775000, math.MaxInt64 - DefaultBlockSize + 1} {
		for _, a := range []int{512, 4096, 3 * 4096} {
			c := Choose(geo(a, a, 0, size), geo(512, 512, 0, 0), 0, 0)
			if c.BlockSize <= 0 || c.BlockSize%a != 0 || c.BlockSize > MaxChosenBlockSize {
				t.Errorf("size %d, alignment %d: block size %d", size, a, c.BlockSize)
			}
			if c.QueueDepth != DefaultQueueDepth {
				t.Errorf("size %d, alignment %d: queue depth %d, want %d", size, a, c.QueueDepth, DefaultQueueDepth)
			}
			for _, why := range c.Why {
				if strings.Contains(why, "-") || strings.Contains(why, "source is only") {
					t.Errorf("size %d: reason %q", size, why)
				}
			}
		}
	}
}
