package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// procDir lists the processes.
const procDir = "/proc"

// otherNamespaceMounts reads the mount table of every mount namespace but
// ours, through one process in each (/proc/PID/mountinfo for the lowest
// PID per distinct /proc/PID/ns/mnt). A device mounted only in a
// container, or under `unshare -m`, is as mounted as one in ours: writing
// it corrupts that filesystem just the same, and from here it only shows
// as "open exclusively". Each entry names the namespace by its process.
// Processes that cannot be looked at (another user's, without root; gone
// meanwhile) are skipped: root sees them all.
func otherNamespaceMounts() mountTable {
	self, err := os.Readlink(filepath.Join(procDir, "self", "ns", "mnt"))
	if err != nil {
		return nil
	}
	seen := map[string]bool{self: true}
	var t mountTable
	for _, pid := range pids() {
		dir := filepath.Join(procDir, strconv.Itoa(pid))
		ns, err := os.Readlink(filepath.Join(dir, "ns", "mnt"))
		if err != nil || seen[ns] {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "mountinfo"))
		if err != nil {
			continue // another process of this namespace may do
		}
		seen[ns] = true
		where := fmt.Sprintf(" in the mount namespace of pid %d (%s)", pid, comm(dir))
		for _, m := range parseMountinfo(string(data)) {
			m.what += where
			t = append(t, m)
		}
	}
	return t
}

// pids lists the processes in ascending order, so that a namespace is
// named by its oldest process (usually the one that made it) every time.
func pids() []int {
	ents, err := os.ReadDir(procDir)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// comm is the process's command name, or "?".
func comm(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
