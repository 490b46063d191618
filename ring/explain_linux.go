package ring

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
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
		return "raise RLIMIT_MEMLOCK (ulimit -l) or use a kernel >= 5.12"
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
