package blkcg

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
)

// Sys says whose cgroups are read.
type Sys struct {
	// Proc is the process's /proc folder, whose cgroup and mountinfo
	// files say where its cgroups are.
	Proc string
}

// Self reads the calling process's cgroups.
var Self = Sys{Proc: "/proc/self"}

// v1Files are cgroup v1's throttle files, in Limit's order.
var v1Files = [4]string{
	"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
	"blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device",
}

// Lookup returns the limits the cgroups of s put on the disk disk (its
// device number: cgroups take limits on whole disks, and a partition's
// I/O is counted on its disk). A hierarchy it cannot place (no blkio or
// cgroup2 mount, a cgroup outside the mount's view) adds nothing; only
// unreadable /proc files are an error.
func (s Sys) Lookup(disk uint64) (Limit, error) {
	cg, err := os.ReadFile(filepath.Join(s.Proc, "cgroup"))
	if err != nil {
		return Limit{}, err
	}
	mi, err := os.ReadFile(filepath.Join(s.Proc, "mountinfo"))
	if err != nil {
		return Limit{}, err
	}
	dev := sysblock.Number(disk)
	p1, p2 := cgroupPaths(string(cg))
	m1, m2 := cgroupMounts(string(mi))
	var l Limit
	for _, dir := range levels(m1, p1) {
		for i, name := range v1Files {
			file := filepath.Join(dir, name)
			var one Limit
			*one.field(i) = readV1(file, dev)
			l.tighten(one, file)
		}
	}
	for _, dir := range levels(m2, p2) {
		file := filepath.Join(dir, "io.max")
		data, err := os.ReadFile(file)
		if err == nil {
			l.tighten(parseV2(string(data), dev), file)
		}
	}
	return l, nil
}

func readV1(file, dev string) uint64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	return parseV1(string(data), dev)
}

// levels are the folders of cgroup path in mount m, from the cgroup up to
// the mount's root; none when m is nil or path is not below its root.
func levels(m *mount, path string) []string {
	if m == nil || path == "" {
		return nil
	}
	rel := path
	if m.root != "/" {
		// A mount of a cgroup below the hierarchy's root (a bind
		// mount): path must be inside it.
		if path != m.root && !strings.HasPrefix(path, m.root+"/") {
			return nil
		}
		rel = strings.TrimPrefix(path, m.root)
	}
	if strings.Contains(rel, "/..") { // outside this cgroup namespace
		return nil
	}
	dir := filepath.Join(m.point, rel)
	var out []string
	for {
		out = append(out, dir)
		if dir == m.point || !strings.HasPrefix(dir, m.point) {
			return out
		}
		dir = filepath.Dir(dir)
	}
}

// DiskOf is the whole disk of block device rdev: rdev itself, or the
// disk of a partition. ok is false when sysfs does not know rdev.
func DiskOf(rdev uint64) (uint64, bool) {
	d, err := sysblock.Lookup(rdev)
	if err != nil {
		return 0, false
	}
	if d.IsPartition() {
		if d, err = d.Disk(); err != nil {
			return 0, false
		}
	}
	return d.Rdev, true
}
