package align

import (
	"testing"

	"github.com/ringcp/ringcp/internal/sysblock"
	"github.com/ringcp/ringcp/internal/sysblock/sysfstest"
)

// TestReadQueue: a partition's figures come from its disk's queue, and
// reach the geometry with notes; a garbled dma_alignment counts as absent.
// (sysblock's tests cover finding the queue.)
func TestReadQueue(t *testing.T) {
	tree := sysfstest.Build(t, sysfstest.Disk{Name: "vda", Dev: "254:0", Queue: map[string]string{
		"logical_block_size":     "512\n",
		"physical_block_size":    "4096\n",
		"optimal_io_size":        "196608\n",
		"max_sectors_kb":         "1280\n",
		"rotational":             "0\n",
		"write_zeroes_max_bytes": "1048576\n",
		"dma_alignment":          "garbage\n",
	}, Parts: []sysfstest.Part{{Name: "vda1", Dev: "254:1", Start: 2048}}})
	q := probeQueue(devNum{254, 1})
	if q == nil {
		t.Fatal("no queue for the partition")
	}
	want := queueInfo{dev: devNum{254, 1}, Queue: sysblock.Queue{Dir: tree.Dir("vda") + "/queue", Logical: 512,
		Physical: 4096, Optimal: 196608, MaxSectorsKB: 1280, DMAAlignment: -1, Rotational: 0, WriteZeroesMax: 1048576}}
	if *q != want {
		t.Errorf("probeQueue = %+v, want %+v", *q, want)
	}
	if probeQueue(devNum{0, 27}) != nil {
		t.Error("an anonymous device (tmpfs) has a queue")
	}
	var g Geometry
	g.fillQueueHints(q)
	g.fillMemAlign(statInfo{}, q)
	if g.WriteZeroesMax != 1048576 {
		t.Errorf("WriteZeroesMax = %d, want 1048576", g.WriteZeroesMax)
	}
	if g.OptimalIO != 196608 || g.MaxIO != 1280*1024 || g.Rotational {
		t.Errorf("hints: %+v", g)
	}
	// dma_alignment is garbled here, as if absent (before Linux 6.0):
	// with no logical block size known either, the 4096 fallback.
	if g.MemAlign != 4096 || !hasNote(g, "assumed") {
		t.Errorf("MemAlign %d, notes %q; want the 4096 fallback", g.MemAlign, g.Notes)
	}
}
