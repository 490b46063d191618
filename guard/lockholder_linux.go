package guard

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Who holds a lock, as far as the kernel tells: /proc/locks names the
// process of a flock(2) or fcntl lock; an OFD lock (QEMU's) belongs to an
// open file, so /proc/locks shows pid -1, and the processes are found by
// the "lock:" lines of their /proc/PID/fdinfo/FD, which list the locks held
// through that descriptor. /proc/PID/comm names them.

// heldLock is one lock line of /proc/locks or of an fdinfo file, e.g.
// "3: OFDLCK ADVISORY  READ -1 fe:00:9978148 100 101".
type heldLock struct {
	class      string // FLOCK, POSIX or OFDLCK
	write      bool
	pid        int // -1 for OFD locks
	major      uint32
	minor      uint32
	ino        uint64
	start, end int64 // end -1: to the end of the file
}

// parseLockLine reads one lock line; ok is false for other lines, for
// blocked waiters ("->") and for leases and delegations.
func parseLockLine(s string) (l heldLock, ok bool) {
	f := strings.Fields(s)
	if len(f) != 8 {
		return l, false
	}
	switch f[1] {
	case "FLOCK", "POSIX", "OFDLCK":
	default:
		return l, false
	}
	l.class, l.write = f[1], f[3] == "WRITE"
	pid, err1 := strconv.Atoi(f[4])
	id := strings.Split(f[5], ":")
	start, err2 := strconv.ParseInt(f[6], 10, 64)
	if err1 != nil || err2 != nil || len(id) != 3 {
		return l, false
	}
	major, err1 := strconv.ParseUint(id[0], 16, 32)
	minor, err2 := strconv.ParseUint(id[1], 16, 32)
	ino, err3 := strconv.ParseUint(id[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return l, false
	}
	l.pid, l.major, l.minor, l.ino, l.start, l.end = pid, uint32(major), uint32(minor), ino, start, -1
	if f[7] != "EOF" {
		if l.end, err1 = strconv.ParseInt(f[7], 10, 64); err1 != nil {
			return l, false
		}
	}
	return l, true
}

// on says the lock is on the inode st describes.
func (l heldLock) on(st *unix.Stat_t) bool {
	return l.ino == st.Ino && l.major == unix.Major(st.Dev) && l.minor == unix.Minor(st.Dev)
}

func (l heldLock) overlaps(r byteRange) bool {
	if l.end >= 0 && l.end < r.off {
		return false
	}
	return r.n == lockEOF || l.start < r.off+r.n
}

// Holders names the processes that hold c's kind of lock on f's inode, for
// a message: "qemu-nbd (pid 4242)", the first four and how many more. own
// are this process's descriptors whose locks are the caller's own, not
// another's. n is how many were found; 0 when the kernel does not say
// (another user's process, without root).
func (c *Conflict) Holders(f *os.File, own ...*os.File) (names string, n int) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return "", 0
	}
	skip := map[string]bool{}
	for _, o := range own {
		skip[strconv.Itoa(int(o.Fd()))] = true
	}
	match := func(l heldLock) bool { return l.on(&st) && c.match(l) }
	pids := lockHolders(match, skip)
	var parts []string
	for i, pid := range pids {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("and %d more", len(pids)-i))
			break
		}
		parts = append(parts, processName(pid))
	}
	return strings.Join(parts, ", "), len(pids)
}

// lockHolders returns the pids, sorted, whose locks match. Our own pid in
// /proc/locks says nothing (the lock may be ringcp's own), so it and the
// OFD locks send the search through fdinfo, where skip (our own lock
// descriptors) can be left out.
func lockHolders(match func(heldLock) bool, skip map[string]bool) []int {
	found := map[int]bool{}
	self, scan := os.Getpid(), false
	eachLockLine("/proc/locks", func(l heldLock) {
		if !match(l) {
			return
		}
		if l.pid > 0 && l.pid != self {
			found[l.pid] = true
		} else {
			scan = true
		}
	})
	if scan {
		scanFdinfo(match, skip, found)
	}
	pids := make([]int, 0, len(found))
	for pid := range found {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	return pids
}

// scanFdinfo adds every process that holds a matching lock through one of
// its descriptors. Reading fdinfo touches no file system (a descriptor on
// a hung NFS mount is no trouble); other users' processes are unreadable
// unless we are root, and are left out.
func scanFdinfo(match func(heldLock) bool, skip map[string]bool, found map[int]bool) {
	procs, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || found[pid] {
			continue
		}
		dir := "/proc/" + p.Name() + "/fdinfo/"
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			if pid == self && skip[fd.Name()] {
				continue
			}
			eachLockLine(dir+fd.Name(), func(l heldLock) {
				if match(l) {
					found[pid] = true
				}
			})
			if found[pid] {
				break
			}
		}
	}
}

// eachLockLine calls fn for each lock line of /proc/locks or an fdinfo
// file (where they follow "lock:").
func eachLockLine(path string, fn func(heldLock)) {
	f, err := os.Open(path)
	if err != nil {
		return // gone, or not ours to read: the holder stays unnamed
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _ := strings.CutPrefix(sc.Text(), "lock:")
		if l, ok := parseLockLine(line); ok {
			fn(l)
		}
	}
}

// processName is "comm (pid N)", or "pid N" when comm is unreadable.
func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	comm := strings.TrimSpace(string(b))
	if err != nil || comm == "" {
		return fmt.Sprintf("pid %d", pid)
	}
	return fmt.Sprintf("%s (pid %d)", comm, pid)
}
