package align

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeSys builds a sysfs-like tree under a temp dir and points sysRoot
// at it: a disk 254:0 with a queue, its partition 254:1 (no queue of its
// own), and 0:27 with no entry at all, like tmpfs.
func fakeSys(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	disk := filepath.Join(root, "devices", "virtio1", "block", "vda")
	files := map[string]string{
		"queue/logical_block_size":     "512\n",
		"queue/physical_block_size":    "4096\n",
		"queue/optimal_io_size":        "196608\n",
		"queue/max_sectors_kb":         "1280\n",
		"queue/rotational":             "0\n",
		"queue/write_zeroes_max_bytes": "1048576\n",
		"queue/dma_alignment":          "garbage\n",
		"vda1/partition":               "1\n",
	}
	for name, body := range files {
		p := filepath.Join(disk, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := filepath.Join(root, "dev", "block")
	if err := os.MkdirAll(links, 0o755); err != nil {
		t.Fatal(err)
	}
	for dev, target := range map[string]string{
		"254:0": "../../devices/virtio1/block/vda",
		"254:1": "../../devices/virtio1/block/vda/vda1",
	} {
		if err := os.Symlink(target, filepath.Join(links, dev)); err != nil {
			t.Fatal(err)
		}
	}
	old := sysRoot
	sysRoot = root
	t.Cleanup(func() { sysRoot = old })
	return filepath.Join(disk, "queue")
}

func TestFindQueue(t *testing.T) {
	queue := fakeSys(t)
	tests := []struct {
		dev    devNum
		wantOK bool
	}{
		{devNum{254, 0}, true},
		{devNum{254, 1}, true}, // a partition: the disk's queue
		{devNum{0, 27}, false},
		{devNum{254, 2}, false},
	}
	for _, tt := range tests {
		dir, ok := findQueue(tt.dev)
		if ok != tt.wantOK || ok && dir != queue {
			t.Errorf("findQueue(%s) = %q, %t; want %q, %t", tt.dev, dir, ok, queue, tt.wantOK)
		}
	}
}

func TestReadQueue(t *testing.T) {
	queue := fakeSys(t)
	q := probeQueue(devNum{254, 1})
	if q == nil {
		t.Fatal("no queue for the partition")
	}
	want := queueInfo{dev: devNum{254, 1}, dir: queue, logical: 512, physical: 4096, optimal: 196608,
		maxSectorsKB: 1280, dmaAlignment: -1, rotational: 0, writeZeroes: 1048576}
	if *q != want {
		t.Errorf("probeQueue = %+v, want %+v", *q, want)
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
