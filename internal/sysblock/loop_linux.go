package sysblock

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Loop is a bound loop device and what backs it.
type Loop struct {
	Dev
	Backing Backing
	File    string // the backing's path, for messages (it may be stale)
	Offset  int64  // where the loop device starts in its backing
	Size    int64  // the loop's size limit, 0 for to the end of the backing
}

// Backing identifies the file or block device behind a loop device as
// stat(2) does: a block device by Rdev (not 0), a regular file by Dev and
// Ino.
type Backing struct {
	Dev, Ino uint64
	Rdev     uint64
}

// BoundLoops lists every loop device with something attached.
func BoundLoops() []Loop {
	dirs, _ := filepath.Glob(filepath.Join(Root, "block", "loop*", "loop"))
	var out []Loop
	for _, d := range dirs {
		dev, err := At(filepath.Dir(d))
		if err != nil {
			continue
		}
		if l, ok := LoopOf(dev); ok {
			out = append(out, l)
		}
	}
	return out
}

// LoopOf says what backs d when d is a bound loop device. The backing is
// taken from LOOP_GET_STATUS64 (device and inode numbers, exact); only
// without a device node does it fall back to sysfs's backing_file path,
// which goes stale when the file is renamed or replaced.
func LoopOf(d Dev) (Loop, bool) {
	sys := filepath.Join(d.Dir, "loop")
	if _, err := os.Stat(sys); err != nil {
		return Loop{}, false // not a loop device, or nothing attached
	}
	l := Loop{Dev: d}
	if raw, err := os.ReadFile(filepath.Join(sys, "backing_file")); err == nil {
		l.File = strings.TrimSpace(string(raw))
	}
	if l.fromIoctl() || l.fromSysfs(sys) {
		return l, true
	}
	return Loop{}, false
}

func (l *Loop) fromIoctl() bool {
	f, err := os.OpenFile(l.Node(), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Rdev != l.Rdev {
		return false // /dev holds another device under this name
	}
	info, err := unix.IoctlLoopGetStatus64(int(f.Fd()))
	if err != nil {
		return false
	}
	// lo_rdevice is the backing's st_rdev: not 0 only for a device.
	l.Backing = Backing{Dev: info.Device, Ino: info.Inode, Rdev: info.Rdevice}
	l.Offset, l.Size = int64(info.Offset), int64(info.Sizelimit)
	return true
}

func (l *Loop) fromSysfs(sys string) bool {
	path := strings.TrimSuffix(l.File, " (deleted)")
	var st unix.Stat_t
	if path == "" || unix.Stat(path, &st) != nil {
		return false
	}
	l.Backing = Backing{Dev: st.Dev, Ino: st.Ino}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		l.Backing.Rdev = st.Rdev
	}
	l.Offset, _ = readInt(filepath.Join(sys, "offset"))
	l.Size, _ = readInt(filepath.Join(sys, "sizelimit"))
	return true
}
