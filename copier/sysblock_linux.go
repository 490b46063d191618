package copier

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Where the kernel shows block devices and mounts. Variables so that tests
// can point them at a fake tree.
var (
	sysDevBlock   = "/sys/dev/block" // M:m -> the device's sysfs folder
	sysBlock      = "/sys/block"     // whole disks, loop devices among them
	sysBtrfs      = "/sys/fs/btrfs"  // <fsid>/devices/ of mounted btrfs
	procMountinfo = "/proc/self/mountinfo"
	procSwaps     = "/proc/swaps"
	devDir        = "/dev"
)

// blockDev is a block device as sysfs shows it.
type blockDev struct {
	rdev uint64
	dir  string // its sysfs folder, symlinks resolved
	name string // the kernel's name: sda, sda1, loop0, loop0p1
}

func devNumber(rdev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(rdev), unix.Minor(rdev))
}

// lookupBlock finds the sysfs folder of the block device rdev.
func lookupBlock(rdev uint64) (blockDev, error) {
	dir, err := filepath.EvalSymlinks(filepath.Join(sysDevBlock, devNumber(rdev)))
	if err != nil {
		return blockDev{}, fmt.Errorf("sysfs entry of block device %s: %w", devNumber(rdev), err)
	}
	return blockDev{rdev: rdev, dir: dir, name: filepath.Base(dir)}, nil
}

// blockAt reads the device in sysfs folder dir.
func blockAt(dir string) (blockDev, error) {
	rdev, err := readDevFile(filepath.Join(dir, "dev"))
	if err != nil {
		return blockDev{}, err
	}
	return blockDev{rdev: rdev, dir: dir, name: filepath.Base(dir)}, nil
}

// readDevFile parses a sysfs "dev" file: "major:minor\n".
func readDevFile(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseDevNumber(strings.TrimSpace(string(b)))
}

func parseDevNumber(s string) (uint64, error) {
	maj, min, ok := strings.Cut(s, ":")
	a, err1 := strconv.ParseUint(maj, 10, 32)
	b, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("not a device number: %q", s)
	}
	return unix.Mkdev(uint32(a), uint32(b)), nil
}

// isPartition: a partition's folder has a "partition" file (its number).
func (b blockDev) isPartition() bool {
	_, err := os.Stat(filepath.Join(b.dir, "partition"))
	return err == nil
}

// disk is the whole disk of a partition: the folder that holds its folder.
func (b blockDev) disk() (blockDev, error) {
	return blockAt(filepath.Dir(b.dir))
}

// partitionStart is where the partition begins on its disk, in bytes.
// sysfs counts 512-byte sectors whatever the device's sector size.
func (b blockDev) partitionStart() (int64, error) {
	v, err := readInt(filepath.Join(b.dir, "start"))
	return v * 512, err
}

// partitions lists the partitions of a whole disk.
func (b blockDev) partitions() ([]blockDev, error) {
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		return nil, err
	}
	var parts []blockDev
	for _, e := range ents {
		dir := filepath.Join(b.dir, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "partition")); err != nil {
			continue
		}
		p, err := blockAt(dir)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// holders names what the kernel stacked on the device: device-mapper
// (LVM, crypt, multipath), md RAID, bcache. Each claimed it exclusively.
func (b blockDev) holders() []string {
	ents, _ := os.ReadDir(filepath.Join(b.dir, "holders"))
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// node is the device's path for messages and ioctls.
func (b blockDev) node() string { return filepath.Join(devDir, b.name) }

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}
