package blkcg

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeSys builds a /proc/self with the given cgroup file and a mountinfo
// that mounts a v1 blkio hierarchy at ROOT/blkio and a v2 one at
// ROOT/unified (mount roots "/" unless given), and returns it with ROOT.
func fakeSys(t *testing.T, cgroup, v1root, v2root string) (Sys, string) {
	t.Helper()
	root := t.TempDir()
	proc := filepath.Join(root, "proc")
	for _, d := range []string{proc, filepath.Join(root, "blkio"), filepath.Join(root, "unified")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mi := "22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw\n" +
		"30 22 0:26 " + v1root + " " + filepath.Join(root, "blkio") + " rw,relatime shared:9 - cgroup cgroup rw,blkio\n" +
		"31 22 0:27 / /x rw - cgroup cgroup rw,memory\n" +
		"32 22 0:28 " + v2root + " " + filepath.Join(root, "unified") + " rw - cgroup2 cgroup2 rw,nsdelegate\n"
	write(t, filepath.Join(proc, "mountinfo"), mi)
	write(t, filepath.Join(proc, "cgroup"), cgroup)
	return Sys{Proc: proc}, root
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestV2IOMax: io.max at every level from the process's cgroup up counts,
// the least figure wins, "max" and other disks' lines are no limit.
func TestV2IOMax(t *testing.T) {
	s, root := fakeSys(t, "0::/machine.slice/vm1.scope\n", "/", "/")
	u := filepath.Join(root, "unified")
	write(t, filepath.Join(u, "machine.slice", "vm1.scope", "io.max"),
		"8:0 rbps=max wbps=104857600 riops=max wiops=max\n7:1 rbps=1 wbps=1 riops=1 wiops=1\n")
	write(t, filepath.Join(u, "machine.slice", "io.max"), "8:0 rbps=52428800 wbps=209715200 riops=max wiops=300\n")
	write(t, filepath.Join(u, "io.max"), "8:0 rbps=1\n") // the root has no io.max; a stray one here still counts as a level
	l, err := s.Lookup(unix.Mkdev(8, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := Limit{ReadBPS: 1, WriteBPS: 100 << 20, WriteIOPS: 300, Files: []string{
		filepath.Join(u, "machine.slice", "vm1.scope", "io.max"), filepath.Join(u, "machine.slice", "io.max"), filepath.Join(u, "io.max")}}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("got %+v\nwant %+v", l, want)
	}
	if got := l.String(); got != "read 1 B/s, write 100 MiB/s, write 300 IOPS" {
		t.Errorf("String: %q", got)
	}
	other, _ := s.Lookup(unix.Mkdev(8, 16))
	if other.Any() || other.String() != "none" {
		t.Errorf("a disk without rules: %+v", other)
	}
}

// TestV1Throttle: the four blkio.throttle files of a v1 hierarchy, named
// by the blkio line of /proc/self/cgroup, at each level.
func TestV1Throttle(t *testing.T) {
	s, root := fakeSys(t, "12:pids:/\n7:blkio:/copies/job1\n4:memory:/other\n0::/\n", "/", "/")
	b := filepath.Join(root, "blkio")
	write(t, filepath.Join(b, "copies", "job1", "blkio.throttle.write_bps_device"), "7:1 104857600\n")
	write(t, filepath.Join(b, "copies", "job1", "blkio.throttle.read_iops_device"), "7:0 10\n7:1 500\n")
	write(t, filepath.Join(b, "copies", "blkio.throttle.write_bps_device"), "7:1 209715200\n")
	write(t, filepath.Join(b, "copies", "blkio.throttle.read_bps_device"), "7:1 1048576\n")
	write(t, filepath.Join(b, "blkio.throttle.write_bps_device"), "")
	l, err := s.Lookup(unix.Mkdev(7, 1))
	if err != nil {
		t.Fatal(err)
	}
	if l.WriteBPS != 100<<20 || l.ReadIOPS != 500 || l.ReadBPS != 1<<20 || l.WriteIOPS != 0 || len(l.Files) != 4 {
		t.Errorf("got %+v", l)
	}
}

// TestMountRoots: a hierarchy mounted from a cgroup below its root (a
// container's bind mount) is walked from there; a cgroup outside what a
// mount shows adds nothing.
func TestMountRoots(t *testing.T) {
	s, root := fakeSys(t, "5:blkio:/lxc/c1/sub\n0::/lxc/c1/sub\n", "/lxc/c1", "/elsewhere")
	write(t, filepath.Join(root, "blkio", "sub", "blkio.throttle.write_bps_device"), "7:1 1000\n")
	write(t, filepath.Join(root, "blkio", "blkio.throttle.write_bps_device"), "7:1 2000\n")
	write(t, filepath.Join(root, "unified", "sub", "io.max"), "7:1 wbps=1\n")
	l, err := s.Lookup(unix.Mkdev(7, 1))
	if err != nil {
		t.Fatal(err)
	}
	if l.WriteBPS != 1000 || len(l.Files) != 2 || !strings.HasSuffix(l.Files[0], "sub/blkio.throttle.write_bps_device") {
		t.Errorf("got %+v", l)
	}
}

// TestNoCgroups: a system without cgroup mounts has no limits; a /proc
// without the files is an error.
func TestNoCgroups(t *testing.T) {
	proc := t.TempDir()
	write(t, filepath.Join(proc, "cgroup"), "0::/\n")
	write(t, filepath.Join(proc, "mountinfo"), "22 1 0:21 / /sys rw - sysfs sysfs rw\n")
	if l, err := (Sys{Proc: proc}).Lookup(unix.Mkdev(8, 0)); err != nil || l.Any() {
		t.Errorf("got %+v, %v", l, err)
	}
	if _, err := (Sys{Proc: t.TempDir()}).Lookup(unix.Mkdev(8, 0)); err == nil {
		t.Error("no error without /proc files")
	}
}
