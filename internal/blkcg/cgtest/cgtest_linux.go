// Package cgtest makes real cgroup v1 blkio groups for tests, with
// throttle limits on chosen disks, and runs commands inside them. Each
// group is removed when its test ends. Everything here needs root and a
// mounted v1 blkio hierarchy; the helpers skip the test, saying why,
// where either is missing.
package cgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/internal/blkcg"
)

// Group is a v1 blkio cgroup made for a test.
type Group struct {
	Dir string // its folder in the blkio hierarchy
	t   testing.TB
}

// BlkioRoot is where the v1 blkio hierarchy is mounted, or "".
func BlkioRoot() string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		for i, x := range f {
			if x == "-" && i+3 < len(f) && f[i+1] == "cgroup" && strings.Contains(","+f[i+3]+",", ",blkio,") {
				return f[4]
			}
		}
	}
	return ""
}

// New makes a blkio cgroup below parent (nil: below the hierarchy's
// root) and removes it when the test ends, after the processes in it.
func New(t testing.TB, parent *Group) *Group {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make cgroups")
	}
	base := BlkioRoot()
	if parent != nil {
		base = parent.Dir
	}
	if base == "" {
		t.Skip("no cgroup v1 blkio hierarchy is mounted")
	}
	dir, err := os.MkdirTemp(base, "ringcp-test-")
	if err != nil {
		t.Skipf("cannot make a blkio cgroup: %v", err)
	}
	g := &Group{Dir: dir, t: t}
	t.Cleanup(g.remove)
	return g
}

// remove waits for the group to empty (its commands were killed by their
// own cleanups) and removes it.
func (g *Group) remove() {
	var err error
	for range 100 {
		if err = os.Remove(g.Dir); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	g.t.Errorf("rmdir %s: %v", g.Dir, err)
}

// Throttle sets one of blkio.throttle's limits ("write_bps_device",
// "read_bps_device", "write_iops_device", "read_iops_device") on the
// disk of the block device node dev.
func (g *Group) Throttle(file, dev string, v uint64) {
	g.t.Helper()
	disk := DiskNumber(g.t, dev)
	path := filepath.Join(g.Dir, "blkio.throttle."+file)
	if err := os.WriteFile(path, []byte(fmt.Sprintf("%s %d\n", disk, v)), 0); err != nil {
		g.t.Fatalf("%s: %v", path, err)
	}
}

// DiskNumber is "MAJ:MIN" of the device node dev, or of its disk when it
// is a partition.
func DiskNumber(t testing.TB, dev string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	disk, ok := blkcg.DiskOf(st.Rdev)
	if !ok {
		t.Fatalf("%s: sysfs does not know device %s", dev, sysblock.Number(st.Rdev))
	}
	return sysblock.Number(disk)
}

// Command is exec.Command run inside the group: a shell moves itself into
// the group's cgroup.procs, then execs name, so the command is in the
// group from its first instruction.
func (g *Group) Command(name string, args ...string) *exec.Cmd {
	script := `echo $$ > "$0/cgroup.procs" && exec "$@"`
	return exec.Command("sh", append([]string{"-c", script, g.Dir, name}, args...)...)
}

// ServiceBytes is what blkio.throttle.io_service_bytes says the group
// moved on the disk of dev, for op "Read" or "Write": every byte the
// throttle charged, once per charge.
func (g *Group) ServiceBytes(dev, op string) uint64 {
	g.t.Helper()
	disk := DiskNumber(g.t, dev)
	data, err := os.ReadFile(filepath.Join(g.Dir, "blkio.throttle.io_service_bytes"))
	if err != nil {
		g.t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var d, o string
		var n uint64
		if _, err := fmt.Sscan(line, &d, &o, &n); err == nil && d == disk && o == op {
			return n
		}
	}
	return 0
}
