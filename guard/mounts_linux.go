package guard

import (
	"os"
	"strconv"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// Where the kernel shows mounts and swap areas.
const (
	procMountinfo = "/proc/self/mountinfo"
	procSwaps     = "/proc/swaps"
)

// mountUse says why a block device or file must never be written: a mounted
// file system, or active swap. The kernel trusts what it wrote there; a
// copy over it corrupts the file system or the memory of running programs.
type mountUse struct {
	what  string // "mounted on /mnt (ext4)", "active swap"
	block bool
	rdev  uint64 // block device
	dev   uint64 // regular file (a swap file)
	ino   uint64
}

// mountTable is every mounted block device and swap area of the system.
type mountTable []mountUse

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
		what := "mounted on " + unescape(f[4]) + " (" + g[0] + ")"
		if rdev, err := sysblock.ParseNumber(f[2]); err == nil {
			t = append(t, mountUse{what: what, block: true, rdev: rdev})
		}
		if src := unescape(g[1]); strings.HasPrefix(src, "/dev/") {
			t = append(t, statUse(src, what)...)
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
			t = append(t, statUse(unescape(f[0]), "active swap")...)
		}
	}
	return t
}

// btrfsDevices lists every device of every mounted btrfs: mountinfo names
// only one of a multi-device file system.
func btrfsDevices() mountTable {
	var t mountTable
	for _, d := range sysblock.BtrfsDevices() {
		t = append(t, mountUse{what: "a device of a mounted btrfs", block: true, rdev: d.Rdev})
	}
	return t
}

// statUse identifies path as a block device or a file.
func statUse(path, what string) mountTable {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return nil
	}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		return mountTable{{what: what, block: true, rdev: st.Rdev}}
	}
	return mountTable{{what: what + " (" + path + ")", dev: st.Dev, ino: st.Ino}}
}

// ofBlock says how the block device rdev is mounted, or "".
func (t mountTable) ofBlock(rdev uint64) string {
	for _, m := range t {
		if m.block && m.rdev == rdev {
			return m.what
		}
	}
	return ""
}

// ofFile says how the regular file (dev, ino) is used, or "".
func (t mountTable) ofFile(dev, ino uint64) string {
	for _, m := range t {
		if !m.block && m.dev == dev && m.ino == ino {
			return m.what
		}
	}
	return ""
}

// unescape undoes the octal escapes (\040 for a space) of /proc files.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
