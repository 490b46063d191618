package sysblock

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Queue is what a block device's sysfs queue/ folder says. A figure is -1
// when its file is missing or unreadable: dma_alignment only appeared in
// Linux 6.0, and containers sometimes hide sysfs.
type Queue struct {
	Dir            string // the queue folder, symlinks resolved
	Logical        int    // logical_block_size
	Physical       int    // physical_block_size
	Optimal        int    // optimal_io_size
	MaxSectorsKB   int    // max_sectors_kb
	DMAAlignment   int    // dma_alignment
	Rotational     int    // rotational: 1 or 0
	WriteZeroesMax int    // write_zeroes_max_bytes
}

// QueueDir returns the queue folder of the block device rdev. A
// partition has no queue of its own: its requests go to its disk's. ok is
// false when rdev has no sysfs entry (Lookup) or no queue.
func QueueDir(rdev uint64) (dir string, ok bool) {
	d, err := Lookup(rdev)
	if err != nil {
		return "", false
	}
	if d.IsPartition() {
		d.Dir = filepath.Dir(d.Dir)
	}
	dir = filepath.Join(d.Dir, "queue")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", false
	}
	return dir, true
}

// QueueOf finds and reads the queue of the block device rdev.
func QueueOf(rdev uint64) (Queue, bool) {
	dir, ok := QueueDir(rdev)
	if !ok {
		return Queue{}, false
	}
	return Queue{
		Dir:            dir,
		Logical:        readAttr(dir, "logical_block_size"),
		Physical:       readAttr(dir, "physical_block_size"),
		Optimal:        readAttr(dir, "optimal_io_size"),
		MaxSectorsKB:   readAttr(dir, "max_sectors_kb"),
		DMAAlignment:   readAttr(dir, "dma_alignment"),
		Rotational:     readAttr(dir, "rotational"),
		WriteZeroesMax: readAttr(dir, "write_zeroes_max_bytes"),
	}, true
}

// readAttr reads one decimal sysfs attribute, -1 if absent or garbled.
func readAttr(dir, name string) int {
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
