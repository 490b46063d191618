package align

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// checkBacking checks that data sits at off in the file at path.
func checkBacking(t *testing.T, path string, data []byte, off int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make([]byte, len(data))
	if _, err := f.ReadAt(got, off); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("backing file %s: other bytes at %d than written through the device", path, off)
	}
}

func TestProbeLoop(t *testing.T) {
	const size = 33<<20 + 12<<10 // a multiple of 4096 but not of 1 MiB
	tests := []struct {
		name   string
		opts   []string
		sector int
	}{
		{"sector4096_dio", []string{"--direct-io=on", "--sector-size", "4096"}, 4096},
		{"default512", nil, 512},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := blocktest.SparseFile(t, size)
			dev := blocktest.Loop(t, file, tt.opts...)
			g := probePath(t, dev, os.O_RDWR|unix.O_DIRECT)
			checkGeometry(t, g)
			if !g.IsBlockDevice || g.Size != size || !g.DirectSupported {
				t.Errorf("IsBlockDevice %t Size %d DirectSupported %t, want true %d true",
					g.IsBlockDevice, g.Size, g.DirectSupported, size)
			}
			if g.LogicalBlockSize != tt.sector || g.OffsetAlign != tt.sector ||
				g.PhysicalBlockSize < tt.sector || g.MaxIO == 0 {
				t.Errorf("logical %d offset align %d physical %d max I/O %d, want %d %d >=%d >0",
					g.LogicalBlockSize, g.OffsetAlign, g.PhysicalBlockSize, g.MaxIO,
					tt.sector, tt.sector, tt.sector)
			}
			for _, n := range []string{"(BLKGETSIZE64)", "(BLKSSZGET)", "(BLKPBSZGET)", "queue/max_sectors_kb"} {
				if !hasNote(g, n) {
					t.Errorf("no note from %s: %q", n, g.Notes)
				}
			}
			// Opened without O_DIRECT, the same device reads the same.
			if g2 := probePath(t, dev, os.O_RDONLY); !reflect.DeepEqual(g, g2) {
				t.Errorf("with and without O_DIRECT differ:\n%+v\n%+v", g, g2)
			}
			data, off := checkDirectIO(t, dev, g, true)
			checkBacking(t, file, data, off)
		})
	}
}

// TestProbeLoopPartition checks a partition, which has no sysfs queue/
// of its own, gets its disk's. This kernel has no partition table
// parsers, so the partition is added by hand (BLKPG via addpart).
func TestProbeLoopPartition(t *testing.T) {
	const start, length = 1 << 20, 8 << 20
	file := blocktest.SparseFile(t, 16<<20)
	dev := blocktest.Loop(t, file, "--partscan", "--sector-size", "4096")
	part := blocktest.Partition(t, dev, 1, start, length)
	g := probePath(t, part, os.O_RDWR|unix.O_DIRECT)
	checkGeometry(t, g)
	disk := probePath(t, dev, os.O_RDONLY)
	if !g.IsBlockDevice || g.Size != length || g.LogicalBlockSize != 4096 {
		t.Errorf("partition: IsBlockDevice %t Size %d logical %d, want true %d 4096",
			g.IsBlockDevice, g.Size, g.LogicalBlockSize, length)
	}
	if g.MaxIO == 0 || g.MaxIO != disk.MaxIO || !hasNote(g, "queue/max_sectors_kb") {
		t.Errorf("partition max I/O %d, disk %d: the disk's queue was not found", g.MaxIO, disk.MaxIO)
	}
	data, off := checkDirectIO(t, part, g, true)
	checkBacking(t, file, data, start+off)
}

// TestProbeFileOnLoop checks a regular file on a file system on a
// 4096-byte-sector loop device: statx and sysfs (through st_dev) must
// both see the loop device's 4096.
func TestProbeFileOnLoop(t *testing.T) {
	for _, fs := range []string{"ext4", "xfs"} { // xfsprogs wants >= 300 MiB
		t.Run(fs, func(t *testing.T) {
			dev := blocktest.Loop(t, blocktest.SparseFile(t, 320<<20), "--direct-io=on", "--sector-size", "4096")
			blocktest.Mkfs(t, dev, fs)
			mnt := blocktest.Mount(t, dev, fs, 0)
			path := filepath.Join(mnt, "f")
			if err := os.WriteFile(path, make([]byte, 100<<10), 0o600); err != nil {
				t.Fatal(err)
			}
			g := probePath(t, path, os.O_RDONLY)
			checkGeometry(t, g)
			var st unix.Stat_t
			if err := unix.Stat(dev, &st); err != nil {
				t.Fatal(err)
			}
			on := fmt.Sprintf("on device %d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
			if g.LogicalBlockSize != 4096 || g.OffsetAlign != 4096 || g.Size != 100<<10 || !hasNote(g, on) {
				t.Errorf("logical %d offset align %d size %d, want 4096 4096 %d, %s",
					g.LogicalBlockSize, g.OffsetAlign, g.Size, 100<<10, on)
			}
			checkDirectIO(t, path, g, true)
		})
	}
}
