package sysblock

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Stat is a block device's I/O counters since it appeared, as its sysfs
// stat file gives them (Documentation/block/stat.rst): one line of
// numbers, 11 of them before Linux 4.18, 15 from 4.18 (discards), 17
// from 5.5 (flushes). Counters a kernel does not give are 0. Sectors
// are 512 bytes whatever the device's sector size; ticks are
// milliseconds.
type Stat struct {
	ReadIOs, ReadMerges, ReadSectors, ReadTicks     int64
	WriteIOs, WriteMerges, WriteSectors, WriteTicks int64
	InFlight, IOTicks, TimeInQueue                  int64
	// 4.18+: discards, counted apart from writes.
	DiscardIOs, DiscardMerges, DiscardSectors, DiscardTicks int64
	// 5.5+: flushes (before, a flush counted as a write of no sectors).
	FlushIOs, FlushTicks int64
}

// statFields are the numbers of fields kernels have written: 4.18 added
// four, 5.5 two. A later kernel may add more; the first 17 keep their
// meaning.
var statFields = []int{11, 15, 17}

// ParseStat reads a stat file's line.
func ParseStat(line string) (Stat, error) {
	f := strings.Fields(line)
	n := len(f)
	if n < 17 && n != 11 && n != 15 {
		return Stat{}, fmt.Errorf("block device stat: %d fields, want %v", n, statFields)
	}
	v := make([]int64, 17)
	for i := 0; i < n && i < len(v); i++ {
		// Counters are unsigned longs; 63 bits keep them int64s.
		x, err := strconv.ParseUint(f[i], 10, 63)
		if err != nil {
			return Stat{}, fmt.Errorf("block device stat: field %d: %w", i+1, err)
		}
		v[i] = int64(x)
	}
	return Stat{
		ReadIOs: v[0], ReadMerges: v[1], ReadSectors: v[2], ReadTicks: v[3],
		WriteIOs: v[4], WriteMerges: v[5], WriteSectors: v[6], WriteTicks: v[7],
		InFlight: v[8], IOTicks: v[9], TimeInQueue: v[10],
		DiscardIOs: v[11], DiscardMerges: v[12], DiscardSectors: v[13], DiscardTicks: v[14],
		FlushIOs: v[15], FlushTicks: v[16],
	}, nil
}

// ReadStat reads and parses the stat file at path.
func ReadStat(path string) (Stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	s, err := ParseStat(string(b))
	if err != nil {
		return Stat{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// StatPath is where the device's counters are.
func (d Dev) StatPath() string { return filepath.Join(d.Dir, "stat") }

// Stat reads the device's counters.
func (d Dev) Stat() (Stat, error) { return ReadStat(d.StatPath()) }
