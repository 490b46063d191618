package engine

import "testing"

// TestNeighbourLevelsUnit: every window's request is a multiple of the
// unit, or a whole block, whatever the unit: the caller's block size
// (copier gives it as the unit, so that only the depth changes) may be
// larger than a MiB or not a power of two. Before, the window of one
// request was a MiB whatever the unit: --block-size 4M beside others
// sent 1 MiB requests.
func TestNeighbourLevelsUnit(t *testing.T) {
	for _, c := range [][3]int{{3, 4 << 20, 4 << 20}, {4, 3 << 20, 3 << 20}, {4, 8 << 20, 12288}, {2, 100000, 3000}, {8, 1 << 20, 2 << 20}, {1, 64 << 10, 4096}} {
		slots, block, unit := c[0], c[1], c[2]
		n := NewNeighbour(slots, block, unit)
		for i, l := range n.levels {
			if l.Request != 0 && l.Request%unit != 0 {
				t.Errorf("%d slots of %d, unit %d: level %d %+v is not a multiple of the unit", slots, block, unit, i, l)
			}
		}
	}
}
