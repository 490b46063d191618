package sysblock

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Root is where sysfs is mounted. Only tests change it (sysfstest.Build),
// to point every reader here at a fake tree.
var Root = "/sys"

// DevDir holds the device nodes that Dev.Node names.
const DevDir = "/dev"

// Dev is a block device as sysfs shows it.
type Dev struct {
	Rdev uint64 // its number, as in st_rdev
	Dir  string // its sysfs folder, symlinks resolved
	Name string // the kernel's name: sda, sda1, loop0, loop0p1
}

// Number formats a device number as sysfs and mountinfo do: "major:minor".
func Number(rdev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(rdev), unix.Minor(rdev))
}

// ParseNumber reads a "major:minor" device number.
func ParseNumber(s string) (uint64, error) {
	maj, min, ok := strings.Cut(s, ":")
	a, err1 := strconv.ParseUint(maj, 10, 32)
	b, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("not a device number: %q", s)
	}
	return unix.Mkdev(uint32(a), uint32(b)), nil
}

// Lookup finds the sysfs folder of the block device rdev through
// /sys/dev/block/MAJ:MIN, a symlink into /sys/devices. It fails for a
// number with no block device behind it: the anonymous devices (major 0)
// of tmpfs, overlayfs, btrfs, NFS and FUSE, or a device since removed.
func Lookup(rdev uint64) (Dev, error) {
	dir, err := filepath.EvalSymlinks(filepath.Join(Root, "dev", "block", Number(rdev)))
	if err != nil {
		return Dev{}, fmt.Errorf("sysfs entry of block device %s: %w", Number(rdev), err)
	}
	return Dev{Rdev: rdev, Dir: dir, Name: filepath.Base(dir)}, nil
}

// At reads the device whose sysfs folder is dir (symlinks resolved).
func At(dir string) (Dev, error) {
	b, err := os.ReadFile(filepath.Join(dir, "dev"))
	if err != nil {
		return Dev{}, err
	}
	rdev, err := ParseNumber(strings.TrimSpace(string(b)))
	if err != nil {
		return Dev{}, err
	}
	return Dev{Rdev: rdev, Dir: dir, Name: filepath.Base(dir)}, nil
}

// IsPartition says d is a partition: its folder has a "partition" file
// (its number), and no queue/ of its own.
func (d Dev) IsPartition() bool {
	_, err := os.Stat(filepath.Join(d.Dir, "partition"))
	return err == nil
}

// Disk is the whole disk of a partition: the folder that holds its
// folder. The symlink was resolved by Lookup, so this is a real parent,
// not /sys/dev/block.
func (d Dev) Disk() (Dev, error) {
	return At(filepath.Dir(d.Dir))
}

// PartitionStart is where the partition begins on its disk, in bytes.
// sysfs counts 512-byte sectors whatever the device's sector size.
func (d Dev) PartitionStart() (int64, error) {
	v, err := readInt(filepath.Join(d.Dir, "start"))
	return v * 512, err
}

// Partitions lists the partitions of a whole disk.
func (d Dev) Partitions() ([]Dev, error) {
	ents, err := os.ReadDir(d.Dir)
	if err != nil {
		return nil, err
	}
	var parts []Dev
	for _, e := range ents {
		dir := filepath.Join(d.Dir, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "partition")); err != nil {
			continue
		}
		p, err := At(dir)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// Holders names what the kernel stacked on the device: device-mapper
// (LVM, crypt, multipath), md RAID, bcache. Each claimed it exclusively.
func (d Dev) Holders() []string {
	ents, _ := os.ReadDir(filepath.Join(d.Dir, "holders"))
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// Node is the device's path, for messages and ioctls.
func (d Dev) Node() string { return filepath.Join(DevDir, d.Name) }

// BtrfsDevices lists every device of every mounted btrfs
// (/sys/fs/btrfs/FSID/devices/): mountinfo names only one device of a
// multi-device file system.
func BtrfsDevices() []Dev {
	var out []Dev
	links, _ := filepath.Glob(filepath.Join(Root, "fs", "btrfs", "*", "devices", "*"))
	for _, l := range links {
		dir, err := filepath.EvalSymlinks(l)
		if err != nil {
			continue
		}
		if d, err := At(dir); err == nil {
			out = append(out, d)
		}
	}
	return out
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}
