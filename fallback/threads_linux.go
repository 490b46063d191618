package fallback

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Threads for the rings. A ring write that would block on ext4 runs in
// an io-wq worker, a kernel thread of the process that counts against the
// pids cgroup's limit (a container's pids.max, as a CDI importer pod has)
// like the Go threads do: through rings the pool needs about twice the
// threads that pwrite needs, one blocked in io_uring_enter and one
// writing. Under a pids.max that pwrite fits (Linux 6.18, 8 workers),
// the copy failed: a write that io-wq could not start a worker for was
// cancelled (ECANCELED, handled in write), or the io-wq workers took the
// last pids and Go could not start a thread ("fatal error: newosproc").
// So rings only where the pids cgroup of the process, and every cgroup
// above it, leaves room for that many more, and RLIMIT_NPROC too (the
// same failures as nobody under ulimit -u).

// threadsPerWorker is how many threads a worker may take through a ring,
// counted with room to spare: its own, its io-wq worker's, and Go's
// threads for goroutines that block meanwhile.
const threadsPerWorker = 4

// threadsToSpare says whether the pids cgroups of the process, and
// RLIMIT_NPROC, leave room for depth workers' threads through rings;
// true where there is no limit or it cannot be read.
func threadsToSpare(depth int) bool {
	want := int64(threadsPerWorker*depth + 32)
	if !nprocToSpare(want) {
		return false
	}
	for _, dir := range pidsCgroups() {
		for d := dir; ; d = filepath.Dir(d) {
			if max, ok := readPidsFile(filepath.Join(d, "pids.max")); ok {
				cur, _ := readPidsFile(filepath.Join(d, "pids.current"))
				if max-cur < want {
					return false
				}
			}
			if d == "/sys/fs/cgroup" || d == "/sys/fs/cgroup/pids" || d == "/" || d == "." {
				break
			}
		}
	}
	return true
}

// pidsCgroups are the folders of the process's pids cgroups, from
// /proc/self/cgroup: the v1 pids hierarchy and the v2 one.
func pidsCgroups() []string {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ID:CONTROLLERS:PATH"; v2 is "0::PATH".
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[1] == "":
			dirs = append(dirs, filepath.Join("/sys/fs/cgroup", parts[2]))
		case strings.Contains(","+parts[1]+",", ",pids,"):
			dirs = append(dirs, filepath.Join("/sys/fs/cgroup/pids", parts[2]))
		}
	}
	return dirs
}

// readPidsFile reads a number from pids.max or pids.current; "max" and
// a file that is not there are no limit.
func readPidsFile(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// nprocToSpare says whether RLIMIT_NPROC leaves room for want more
// threads of the real user, who has them counted against it (io-wq's
// too); root is not held to it (copy_process lets CAP_SYS_ADMIN and
// CAP_SYS_RESOURCE past, and root's own user always), so it is not
// counted for root. The user's threads are counted from /proc.
func nprocToSpare(want int64) bool {
	var lim unix.Rlimit
	if os.Geteuid() == 0 || unix.Getrlimit(unix.RLIMIT_NPROC, &lim) != nil || lim.Cur == unix.RLIM_INFINITY {
		return true
	}
	if lim.Cur < uint64(want) {
		return false
	}
	return int64(lim.Cur)-userThreads(os.Getuid()) >= want
}

// userThreads counts the threads of the processes whose real user is
// uid, from /proc/PID/status (Uid: real first, Threads:).
func userThreads(uid int) int64 {
	pids, _ := filepath.Glob("/proc/[0-9]*/status")
	var n int64
	for _, p := range pids {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		var real, threads string
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 {
				switch f[0] {
				case "Uid:":
					real = f[1]
				case "Threads:":
					threads = f[1]
				}
			}
		}
		if real == strconv.Itoa(uid) {
			t, _ := strconv.ParseInt(threads, 10, 64)
			n += t
		}
	}
	return n
}
