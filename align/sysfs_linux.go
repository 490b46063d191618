package align

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// sysRoot is where sysfs is mounted. Tests point it at a fake tree.
var sysRoot = "/sys"

// devNum is a block device number, as in st_dev or st_rdev.
type devNum struct{ major, minor uint32 }

func (d devNum) String() string { return fmt.Sprintf("%d:%d", d.major, d.minor) }

// queueInfo is what a block device's sysfs queue/ directory says.
// Fields are -1 when the file is missing or unreadable: dma_alignment
// only appeared in Linux 6.0, and containers sometimes hide sysfs.
type queueInfo struct {
	dev          devNum // the device asked about (maybe a partition)
	dir          string // resolved path of the queue directory
	logical      int
	physical     int
	optimal      int
	maxSectorsKB int
	dmaAlignment int
	rotational   int
	writeZeroes  int
}

// findQueue returns the sysfs queue directory of block device d.
//
// /sys/dev/block/MAJ:MIN is a symlink into /sys/devices. A partition's
// directory has a "partition" file and no queue/ of its own: the request
// queue belongs to the whole disk, its parent directory. The symlink
// must be resolved before going up, because a lexical ".." would land
// in /sys/dev/block itself. ok is false when d has no sysfs entry: the
// anonymous devices of tmpfs, overlayfs, btrfs, NFS and FUSE (major 0).
func findQueue(d devNum) (dir string, ok bool) {
	link := filepath.Join(sysRoot, "dev", "block", d.String())
	dev, err := filepath.EvalSymlinks(link)
	if err != nil {
		return "", false
	}
	if _, err := os.Stat(filepath.Join(dev, "partition")); err == nil {
		dev = filepath.Dir(dev)
	}
	dir = filepath.Join(dev, "queue")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", false
	}
	return dir, true
}

// readQueue reads the figures ringcp uses from a queue directory.
func readQueue(dir string) queueInfo {
	return queueInfo{
		dir:          dir,
		logical:      readSysInt(dir, "logical_block_size"),
		physical:     readSysInt(dir, "physical_block_size"),
		optimal:      readSysInt(dir, "optimal_io_size"),
		maxSectorsKB: readSysInt(dir, "max_sectors_kb"),
		dmaAlignment: readSysInt(dir, "dma_alignment"),
		rotational:   readSysInt(dir, "rotational"),
		writeZeroes:  readSysInt(dir, "write_zeroes_max_bytes"),
	}
}

// readSysInt reads one decimal sysfs attribute, -1 if absent or garbled.
func readSysInt(dir, name string) int {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// probeQueue finds and reads the queue of device d, or returns nil.
func probeQueue(d devNum) *queueInfo {
	dir, ok := findQueue(d)
	if !ok {
		return nil
	}
	q := readQueue(dir)
	q.dev = d
	return &q
}

// fillQueueHints copies the queue's optimal and maximum I/O size and
// rotational flag into g, with notes.
func (g *Geometry) fillQueueHints(q *queueInfo) {
	if q.optimal >= 0 {
		g.OptimalIO = q.optimal
		g.note("optimal I/O %d (sysfs %s queue/optimal_io_size)", q.optimal, q.dev)
	}
	if q.maxSectorsKB > 0 {
		g.MaxIO = q.maxSectorsKB * 1024
		g.note("max I/O %d (sysfs %s queue/max_sectors_kb %d)", g.MaxIO, q.dev, q.maxSectorsKB)
	}
	if q.rotational >= 0 {
		g.Rotational = q.rotational == 1
		g.note("rotational %t (sysfs %s queue/rotational)", g.Rotational, q.dev)
	}
	if q.writeZeroes >= 0 {
		g.WriteZeroesMax = q.writeZeroes
		g.note("write zeroes up to %d (sysfs %s queue/write_zeroes_max_bytes)", q.writeZeroes, q.dev)
	}
}
