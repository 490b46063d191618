package copier

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// loopDev is a bound loop device and what backs it.
type loopDev struct {
	blockDev
	backing object // the file or block device behind it
	label   string // the backing path, for messages (it may be stale)
	offset  int64  // where the loop device starts in its backing
	size    int64  // the loop's size limit, 0 for to the end of the backing
}

// window is the part of the backing the loop device shows.
func (l loopDev) window() span {
	s := span{obj: l.backing, off: l.offset, end: -1, label: l.label, via: viaLoop}
	if l.size > 0 {
		s.end = l.offset + l.size
	}
	return s
}

// boundLoops lists every loop device with something attached.
func boundLoops() []loopDev {
	dirs, _ := filepath.Glob(filepath.Join(sysBlock, "loop*", "loop"))
	var out []loopDev
	for _, d := range dirs {
		b, err := blockAt(filepath.Dir(d))
		if err != nil {
			continue
		}
		if l, ok := loopOf(b); ok {
			out = append(out, l)
		}
	}
	return out
}

// loopOf says what backs b when b is a bound loop device. The backing is
// taken from LOOP_GET_STATUS64 (device and inode numbers, exact); only
// without a device node does it fall back to sysfs's backing_file path,
// which goes stale when the file is renamed or replaced.
func loopOf(b blockDev) (loopDev, bool) {
	sys := filepath.Join(b.dir, "loop")
	if _, err := os.Stat(sys); err != nil {
		return loopDev{}, false // not a loop device, or nothing attached
	}
	l := loopDev{blockDev: b}
	if raw, err := os.ReadFile(filepath.Join(sys, "backing_file")); err == nil {
		l.label = strings.TrimSpace(string(raw))
	}
	if l.fromIoctl() || l.fromSysfs(sys) {
		return l, true
	}
	return loopDev{}, false
}

func (l *loopDev) fromIoctl() bool {
	f, err := os.OpenFile(l.node(), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Rdev != l.rdev {
		return false // /dev holds another device under this name
	}
	info, err := unix.IoctlLoopGetStatus64(int(f.Fd()))
	if err != nil {
		return false
	}
	// lo_rdevice is the backing's st_rdev: not 0 only for a device.
	l.backing = object{dev: info.Device, ino: info.Inode}
	if info.Rdevice != 0 {
		l.backing = object{block: true, rdev: info.Rdevice}
	}
	l.offset, l.size = int64(info.Offset), int64(info.Sizelimit)
	return true
}

func (l *loopDev) fromSysfs(sys string) bool {
	path := strings.TrimSuffix(l.label, " (deleted)")
	var st unix.Stat_t
	if path == "" || unix.Stat(path, &st) != nil {
		return false
	}
	l.backing = objectOf(&st)
	l.offset, _ = readInt(filepath.Join(sys, "offset"))
	l.size, _ = readInt(filepath.Join(sys, "sizelimit"))
	return true
}
