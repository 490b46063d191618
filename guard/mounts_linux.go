package guard

import (
	"os"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/internal/mountinfo"
)

// Where the kernel shows mounts and swap areas.
const (
	procMountinfo = "/proc/self/mountinfo"
	procSwaps     = "/proc/swaps"
)

// mount says why an object must never be written: it is a mounted file
// system's device, or active swap (a device or a swap file). The kernel
// trusts what it wrote there; a copy over it corrupts the file system or
// the memory of running programs.
type mount struct {
	obj  Object
	what string // "mounted on /mnt (ext4)", "active swap"
	// rw: the kernel may write the object while it is read: a file
	// system mounted read-write (its superblock's option, whatever a
	// bind mount of it says), active swap, a device of a mounted btrfs
	// (whose options are not looked up: counted as writing).
	rw bool
}

// mountTable is every mounted block device and swap area of the system.
type mountTable []mount

// readMountTable reads /proc/self/mountinfo, the mount tables of the other
// mount namespaces, /proc/swaps and the devices of mounted btrfs file
// systems.
func readMountTable() (mountTable, error) {
	data, err := os.ReadFile(procMountinfo)
	if err != nil {
		return nil, err
	}
	t := append(parseMountinfo(string(data)), otherNamespaceMounts()...)
	if swaps, err := os.ReadFile(procSwaps); err == nil {
		t = append(t, parseSwaps(string(swaps))...)
	}
	return append(t, btrfsDevices()...), nil
}

// parseMountinfo reads lines like
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw
//
// Each mount counts by its device number, and by its source when that is a
// device node: btrfs shows an anonymous device number (0:N) there.
func parseMountinfo(data string) mountTable {
	var t mountTable
	for _, line := range strings.Split(data, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 2 {
			continue
		}
		what := "mounted on " + mountinfo.Unescape(f[4]) + " (" + g[0] + ")"
		rw := len(g) > 2 && superWritable(g[2])
		if rdev, err := sysblock.ParseNumber(f[2]); err == nil {
			t = append(t, mount{blockObject(rdev), what, rw})
		}
		if src := mountinfo.Unescape(g[1]); strings.HasPrefix(src, "/dev/") {
			t = append(t, statUse(src, what, rw)...)
		}
	}
	return t
}

// parseSwaps reads /proc/swaps: a header, then "Filename Type ...".
func parseSwaps(data string) mountTable {
	var t mountTable
	lines := strings.Split(data, "\n")
	for _, line := range lines[min(1, len(lines)):] {
		if f := strings.Fields(line); len(f) > 0 {
			t = append(t, statUse(mountinfo.Unescape(f[0]), "active swap", true)...)
		}
	}
	return t
}

// btrfsDevices lists every device of every mounted btrfs: mountinfo names
// only one of a multi-device file system.
func btrfsDevices() mountTable {
	var t mountTable
	for _, d := range sysblock.BtrfsDevices() {
		t = append(t, mount{blockObject(d.Rdev), "a device of a mounted btrfs", true})
	}
	return t
}

// statUse identifies path as a block device or a file; a file is named,
// since its object says nothing a reader knows.
func statUse(path, what string, rw bool) mountTable {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return nil
	}
	obj := ObjectOf(&st)
	if !obj.Block {
		what += " (" + path + ")"
	}
	return mountTable{{obj, what, rw}}
}

// superWritable says whether a superblock's options (mountinfo's last
// field, "rw,errors=remount-ro") are read-write: then the file system
// writes its device, whatever one mount of it shows.
func superWritable(opts string) bool {
	first, _, _ := strings.Cut(opts, ",")
	return first == "rw"
}

// writing keeps the mounts whose object the kernel may write.
func (t mountTable) writing() mountTable {
	var out mountTable
	for _, m := range t {
		if m.rw {
			out = append(out, m)
		}
	}
	return out
}

// of says how obj is mounted or used as swap, or "".
func (t mountTable) of(obj Object) string {
	for _, m := range t {
		if m.obj == obj {
			return m.what
		}
	}
	return ""
}
