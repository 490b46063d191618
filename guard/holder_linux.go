package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// exclusiveHolder says who holds a block device that O_EXCL found busy.
// A filesystem holds its device for as long as its superblock lives, which
// can outlast every mount table: a lazily unmounted filesystem with a file
// still open (umount -l), or one mounted in a mount namespace that no
// process is in (kept by a bind mount of its nsfs file). Those are as
// mounted as any, and Mounted. Evidence, in order: the filesystem's own
// per-device folder in sysfs (/sys/fs/ext4/loop0, /sys/fs/xfs/sdb1...);
// else, when no process has the device open, the kernel holds it (a
// filesystem or swap no mount table shows). Only a process holding it is
// "in use", which Force may override.
func exclusiveHolder(path string) Busy {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return Busy{What: inUseMessage(path, "")}
	}
	if fs := activeFilesystem(st.Rdev); fs != "" {
		return Busy{Kind: Mounted, What: fmt.Sprintf("%s holds a live %s filesystem that no mount table shows (lazily unmounted, or mounted in a mount namespace no process is in)", path, fs)}
	}
	pids := openers(st.Rdev)
	if len(pids) == 0 {
		return Busy{Kind: Mounted, What: path + " is held by the kernel, not by any process: a filesystem or swap that no mount table shows"}
	}
	return Busy{What: inUseMessage(path, describePids(pids))}
}

func inUseMessage(path, who string) string {
	if who == "" {
		who = "another program (a VM, LVM, md, another ringcp?)"
	}
	return fmt.Sprintf("%s is open exclusively by %s", path, who)
}

// activeFilesystem names the filesystem type whose sysfs folder for the
// device rdev exists, or "": ext4, xfs, f2fs and others make one per
// mounted device, named like the device, and drop it when the superblock
// goes.
func activeFilesystem(rdev uint64) string {
	d, err := sysblock.Lookup(rdev)
	if err != nil {
		return ""
	}
	dirs, _ := filepath.Glob(filepath.Join(sysblock.Root, "fs", "*", d.Name))
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return filepath.Base(filepath.Dir(dir))
		}
	}
	return ""
}

// openers lists the processes that have the block device rdev open.
func openers(rdev uint64) []int {
	var pids []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			var st unix.Stat_t
			if unix.Stat(filepath.Join("/proc", p.Name(), "fd", fd.Name()), &st) == nil &&
				st.Mode&unix.S_IFMT == unix.S_IFBLK && st.Rdev == rdev {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// describePids: "qemu-system-x86 (pid 42), ringcp (pid 43)".
func describePids(pids []int) string {
	names := make([]string, len(pids))
	for i, pid := range pids {
		names[i] = processName(pid)
	}
	return strings.Join(names, ", ")
}
