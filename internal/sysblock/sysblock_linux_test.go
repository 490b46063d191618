package sysblock_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/sysblock"
	"github.com/ringcp/ringcp/internal/sysblock/sysfstest"
	"golang.org/x/sys/unix"
)

// disks is a fake sysfs: disk vdx (7:0) holding partition vdx1 (259:1,
// from sector 2048, held by dm-0) and vdx2 (259:2); disk vda (254:0) with
// a queue and its partition vda1 (254:1), which has none of its own.
func disks(t *testing.T) *sysfstest.Tree {
	return sysfstest.Build(t,
		sysfstest.Disk{Name: "vdx", Dev: "7:0", Parts: []sysfstest.Part{
			{Name: "vdx1", Dev: "259:1", Start: 2048, Holders: []string{"dm-0"}},
			{Name: "vdx2", Dev: "259:2", Start: 4096},
		}},
		sysfstest.Disk{Name: "vda", Dev: "254:0", Queue: map[string]string{
			"logical_block_size":     "512\n",
			"physical_block_size":    "4096\n",
			"optimal_io_size":        "196608\n",
			"max_sectors_kb":         "1280\n",
			"rotational":             "0\n",
			"write_zeroes_max_bytes": "1048576\n",
			"dma_alignment":          "garbage\n",
		}, Parts: []sysfstest.Part{{Name: "vda1", Dev: "254:1", Start: 2048}}},
	)
}

// TestPartitionAndDisk: a partition is found by its number, knows its
// start and its disk; the disk lists its partitions; holders are named.
func TestPartitionAndDisk(t *testing.T) {
	disks(t)
	p1, err := sysblock.Lookup(unix.Mkdev(259, 1))
	if err != nil {
		t.Fatal(err)
	}
	if p1.Name != "vdx1" || !p1.IsPartition() || p1.Node() != "/dev/vdx1" {
		t.Errorf("259:1 is %q (%s) partition=%v, want vdx1, a partition", p1.Name, p1.Node(), p1.IsPartition())
	}
	if start, err := p1.PartitionStart(); err != nil || start != 2048*512 {
		t.Errorf("start %d, %v; want %d", start, err, 2048*512)
	}
	disk, err := p1.Disk()
	if err != nil || disk.Rdev != unix.Mkdev(7, 0) || disk.IsPartition() {
		t.Fatalf("disk of vdx1: %+v, %v", disk, err)
	}
	parts, err := disk.Partitions()
	if err != nil || len(parts) != 2 || parts[1].Rdev != unix.Mkdev(259, 2) {
		t.Fatalf("partitions: %+v, %v", parts, err)
	}
	if h := p1.Holders(); !reflect.DeepEqual(h, []string{"dm-0"}) {
		t.Errorf("holders %q, want dm-0", h)
	}
	if h := disk.Holders(); len(h) != 0 {
		t.Errorf("disk holders %q, want none", h)
	}
	if _, err := sysblock.Lookup(unix.Mkdev(8, 0)); err == nil {
		t.Error("an unknown device was found")
	}
}

// TestQueueDir: a disk's queue, a partition's is its disk's, none for an
// anonymous device (tmpfs's 0:27) or an unknown one.
func TestQueueDir(t *testing.T) {
	tree := disks(t)
	queue := tree.Dir("vda") + "/queue"
	tests := []struct {
		dev    uint64
		wantOK bool
	}{
		{unix.Mkdev(254, 0), true},
		{unix.Mkdev(254, 1), true},
		{unix.Mkdev(0, 27), false},
		{unix.Mkdev(254, 2), false},
		{unix.Mkdev(7, 0), false}, // vdx has no queue/ in this tree
	}
	for _, tt := range tests {
		dir, ok := sysblock.QueueDir(tt.dev)
		if ok != tt.wantOK || ok && dir != queue {
			t.Errorf("QueueDir(%s) = %q, %t; want %q, %t", sysblock.Number(tt.dev), dir, ok, queue, tt.wantOK)
		}
	}
}

// TestQueueOf: every figure read, a garbled one as -1.
func TestQueueOf(t *testing.T) {
	tree := disks(t)
	q, ok := sysblock.QueueOf(unix.Mkdev(254, 1))
	want := sysblock.Queue{Dir: tree.Dir("vda") + "/queue", Logical: 512, Physical: 4096, Optimal: 196608,
		MaxSectorsKB: 1280, DMAAlignment: -1, Rotational: 0, WriteZeroesMax: 1048576}
	if !ok || q != want {
		t.Errorf("QueueOf = %+v, %v; want %+v", q, ok, want)
	}
}

func TestParseNumber(t *testing.T) {
	for in, want := range map[string]uint64{"254:1": unix.Mkdev(254, 1), "0:27": unix.Mkdev(0, 27)} {
		if got, err := sysblock.ParseNumber(in); err != nil || got != want || sysblock.Number(got) != in {
			t.Errorf("ParseNumber(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "254", "a:1", "1:-1", "4294967296:0"} {
		if _, err := sysblock.ParseNumber(bad); err == nil {
			t.Errorf("ParseNumber(%q) did not fail", bad)
		}
	}
}

// TestLoopFromSysfs: a loop device without a node in /dev is read from
// sysfs: its backing file by path, offset and size limit.
func TestLoopFromSysfs(t *testing.T) {
	backing := filepath.Join(t.TempDir(), "backing")
	if err := os.WriteFile(backing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(backing, &st); err != nil {
		t.Fatal(err)
	}
	sysfstest.Build(t, sysfstest.Disk{Name: "loopfake9", Dev: "7:99", Loop: map[string]string{
		"backing_file": backing + "\n", "offset": "4096\n", "sizelimit": "8192\n",
	}}, sysfstest.Disk{Name: "loopfake8", Dev: "7:98"})
	loops := sysblock.BoundLoops()
	if len(loops) != 1 {
		t.Fatalf("bound loops: %+v, want loopfake9 only", loops)
	}
	l := loops[0]
	want := sysblock.Backing{Dev: st.Dev, Ino: st.Ino}
	if l.Name != "loopfake9" || l.Backing != want || l.File != backing || l.Offset != 4096 || l.Size != 8192 {
		t.Errorf("loop: %+v, want backing %+v at 4096, 8192 bytes", l, want)
	}
}

// TestLoopFromIoctl: a real loop device with an offset and a size limit
// is read with LOOP_GET_STATUS64, its backing by device and inode.
func TestLoopFromIoctl(t *testing.T) {
	blocktest.NeedRoot(t)
	file := blocktest.SparseFile(t, 4<<20)
	dev := blocktest.Loop(t, file, "--offset", "1048576", "--sizelimit", "2097152")
	var st, fst unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(file, &fst); err != nil {
		t.Fatal(err)
	}
	d, err := sysblock.Lookup(st.Rdev)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := sysblock.LoopOf(d)
	want := sysblock.Backing{Dev: fst.Dev, Ino: fst.Ino}
	if !ok || l.Backing != want || l.Offset != 1<<20 || l.Size != 2<<20 || l.Node() != dev {
		t.Errorf("LoopOf(%s) = %+v, %v; want backing %+v at 1 MiB, 2 MiB", dev, l, ok, want)
	}
	found := false
	for _, b := range sysblock.BoundLoops() {
		found = found || b.Rdev == st.Rdev
	}
	if !found {
		t.Errorf("%s is not among the bound loops", dev)
	}
}
