package ring

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Files that say why io_uring_setup refused. Variables so tests can point
// them elsewhere.
var (
	disabledSysctl = "/proc/sys/kernel/io_uring_disabled"
	selfStatus     = "/proc/self/status"
)

// explain reads what the system says about a setup refusal, so that a user
// learns whether to ask for a sysctl change, a seccomp profile, or memlock.
func explain(errno syscall.Errno) string {
	switch errno {
	case syscall.EPERM:
		return explainEPERM()
	case syscall.ENOMEM:
		return explainENOMEM(kernelRelease(), memlockLimit())
	case syscall.ENOSYS:
		if mode := seccompMode(); mode != "" && mode != "0" {
			return "a seccomp filter may hide it (Seccomp: " + mode + ")"
		}
		return "kernel built without io_uring or older than 5.1"
	}
	return ""
}

func explainEPERM() string {
	var parts []string
	if b, err := os.ReadFile(disabledSysctl); err == nil {
		v := strings.TrimSpace(string(b))
		switch v {
		case "1":
			parts = append(parts, "kernel.io_uring_disabled=1 (only the io_uring_group may use it)")
		case "2":
			parts = append(parts, "kernel.io_uring_disabled=2 (off for everyone)")
		default:
			parts = append(parts, fmt.Sprintf("kernel.io_uring_disabled=%s", v))
		}
	}
	if mode := seccompMode(); mode == "2" {
		parts = append(parts, "a seccomp filter is active (container runtimes block io_uring by default)")
	}
	return strings.Join(parts, "; ")
}

// seccompMode returns the Seccomp field of /proc/self/status: 0 none,
// 1 strict, 2 filter; "" when unknown.
func seccompMode() string {
	f, err := os.Open(selfStatus)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Seccomp:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// What the kernel charges io_uring_setup's rings to decides what its
// ENOMEM means:
//
//   - before 5.12, to RLIMIT_MEMLOCK (locked memory, ulimit -l);
//   - from 5.12, to the memory cgroup instead ("io_uring: account memory
//     to memcg"): RLIMIT_MEMLOCK plays no part, and ENOMEM means the
//     cgroup or the system is short of memory;
//   - from 6.14, when the rings moved to io_uring's memory regions
//     (io_create_region), to RLIMIT_MEMLOCK again, unless the process has
//     CAP_IPC_LOCK: with `ulimit -l 0` setup fails on 6.18.
//
// Variables so tests can pose as any kernel and limit.
var (
	kernelRelease = unameRelease
	memlockLimit  = currentMemlock
)

// explainENOMEM says why io_uring_setup found no memory on the kernel
// release given (uname -r), with the current RLIMIT_MEMLOCK.
func explainENOMEM(release, limit string) string {
	major, minor, ok := parseRelease(release)
	switch {
	case !ok:
		return fmt.Sprintf("raise RLIMIT_MEMLOCK (ulimit -l, now %s) or run with CAP_IPC_LOCK; else memory is short", limit)
	case major < 5 || major == 5 && minor < 12:
		return fmt.Sprintf("kernel %d.%d charges the rings to RLIMIT_MEMLOCK (ulimit -l, now %s): raise it or run with CAP_IPC_LOCK", major, minor, limit)
	case major < 6 || major == 6 && minor < 14:
		return fmt.Sprintf("kernel %d.%d charges the rings to the memory cgroup, not to RLIMIT_MEMLOCK: the cgroup's memory limit, or the system, has no room for them", major, minor)
	}
	return fmt.Sprintf("kernel %d.%d charges the rings to RLIMIT_MEMLOCK (ulimit -l, now %s), as kernels since 6.14 do: raise it or run with CAP_IPC_LOCK", major, minor, limit)
}

// parseRelease reads "6.18.44-fc-v669" as 6, 18.
func parseRelease(release string) (major, minor int, ok bool) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	digits := parts[1]
	if i := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		digits = digits[:i] // "18-rc3" on a two-part release
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(digits)
	return major, minor, err1 == nil && err2 == nil
}

func unameRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// currentMemlock renders the soft RLIMIT_MEMLOCK in ulimit -l's terms.
func currentMemlock() string {
	var r unix.Rlimit
	switch {
	case unix.Getrlimit(unix.RLIMIT_MEMLOCK, &r) != nil:
		return "unknown"
	case r.Cur == unix.RLIM_INFINITY:
		return "unlimited"
	}
	return strconv.FormatUint(r.Cur>>10, 10) + " KiB"
}
