// Package iocount counts what a test's DST was really sent: the bytes a
// block device was asked to read, write and discard, from its counters
// in sysfs (/sys/dev/block/MAJ:MIN/stat), which a loop device keeps for
// every request it gets, and a file's allocation. A test of a sync or a
// partial copy asserts with it how much was written, not only what DST
// holds afterwards.
//
// A file DST is counted by putting it on a file system of its own on a
// loop device (OnLoop): the device then sees the file's data writes plus
// the file system's metadata and journal, which Near's slack absorbs.
package iocount

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/sysblock"
)

// Counts are a block device's totals since it appeared, in bytes.
// Writes include REQ_OP_WRITE_ZEROES (how fallocate ZERO_RANGE and
// PUNCH_HOLE reach a loop device: the kernel accounts them as writes);
// discards are counted apart.
type Counts struct {
	ReadBytes    int64
	WriteBytes   int64
	DiscardBytes int64
}

// Since is what happened between before and c.
func (c Counts) Since(before Counts) Counts {
	return Counts{ReadBytes: c.ReadBytes - before.ReadBytes, WriteBytes: c.WriteBytes - before.WriteBytes,
		DiscardBytes: c.DiscardBytes - before.DiscardBytes}
}

// Device reads the counters of the block device at the node dev.
func Device(t testing.TB, dev string) Counts {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK {
		t.Fatalf("iocount: %s is not a block device: %v", dev, err)
	}
	path := fmt.Sprintf("/sys/dev/block/%d:%d/stat", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("iocount: %v", err)
	}
	c, err := parseStat(string(b))
	if err != nil {
		t.Fatalf("iocount: %s: %v", path, err)
	}
	return c
}

// parseStat reads the counters of a stat file (sysblock.ParseStat):
// sectors read, written and discarded, in 512-byte units whatever the
// device's sector size; kernels before 4.18 count no discards.
func parseStat(s string) (Counts, error) {
	st, err := sysblock.ParseStat(s)
	if err != nil {
		return Counts{}, err
	}
	return Counts{ReadBytes: st.ReadSectors * 512, WriteBytes: st.WriteSectors * 512, DiscardBytes: st.DiscardSectors * 512}, nil
}

// Allocated is the bytes a file has allocated (st_blocks).
func Allocated(t testing.TB, path string) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatalf("iocount: %v", err)
	}
	return st.Blocks * 512
}

// OnLoop makes a file system of fstype (ext4, xfs) on a new loop device
// of size bytes, mounts it, and returns the folder and the device, whose
// Counts then count what is written to files in the folder. Everything
// goes away when the test ends. It needs root (blocktest skips without).
func OnLoop(t testing.TB, size int64, fstype string) (dir, dev string) {
	t.Helper()
	dev, _ = blocktest.Device(t, size)
	var opts []string
	if fstype == "ext4" {
		// No lazy init: ext4lazyinit would zero inode tables in the
		// background for minutes, and the counts would be its.
		opts = []string{"-E", "lazy_itable_init=0,lazy_journal_init=0"}
	}
	blocktest.Mkfs(t, dev, fstype, opts...)
	return blocktest.Mount(t, dev, fstype, 0), dev
}

// Settle makes everything written to the file system holding path
// durable (syncfs), so that counts taken next see only what follows.
func Settle(t testing.TB, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		t.Fatalf("syncfs %s: %v", path, err)
	}
}

// Near fails the test unless got lies in [want, want*ratio + slack]: at
// least what had to be written, at most that with the overhead allowed.
func Near(t testing.TB, what string, got, want int64, ratio float64, slack int64) {
	t.Helper()
	t.Logf("%s: %d bytes (the changes: %d)", what, got, want)
	if limit := int64(float64(want)*ratio) + slack; got < want || got > limit {
		t.Errorf("%s: %d bytes, want from %d to %d (%.2fx + %d)", what, got, want, limit, ratio, slack)
	}
}
