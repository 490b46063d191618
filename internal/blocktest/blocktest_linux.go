// Package blocktest makes real loop devices, partitions, file systems and
// mounts for tests, and removes them when the test ends. Everything here
// needs root; each helper skips the test, with the reason, when it is not
// root or a tool is missing.
//
// This kernel has no partition table parsers, so a partition is added by
// hand with BLKPG (addpart) on a loop device attached with --partscan.
package blocktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// NeedRoot skips the test unless it runs as root.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for loop devices, partitions and mounts")
	}
}

// NeedTool skips the test unless it runs as root and name is installed.
func NeedTool(t testing.TB, name string) {
	t.Helper()
	NeedRoot(t)
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
}

// Run runs a command and returns its trimmed output, failing the test
// with that output on error.
func Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// SparseFile creates a sparse file of size bytes in a new temp dir.
func SparseFile(t testing.TB, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backing")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return path
}

// Loop attaches file to a free loop device with extra losetup options
// (--partscan, --read-only, --offset N...) and detaches it when the test
// ends.
func Loop(t testing.TB, file string, opts ...string) string {
	t.Helper()
	NeedTool(t, "losetup")
	args := append(append([]string{"--find", "--show"}, opts...), file)
	dev := Run(t, "losetup", args...)
	t.Cleanup(func() { detach(t, dev) })
	return dev
}

// Device attaches a new sparse file of size bytes to a free loop device,
// with extra losetup options, and returns the device and its backing file.
func Device(t testing.TB, size int64, opts ...string) (dev, backing string) {
	t.Helper()
	backing = SparseFile(t, size)
	return Loop(t, backing, opts...), backing
}

// detach retries for a while: udev may still hold the device just after a
// test closed it.
func detach(t testing.TB, dev string) {
	var out []byte
	var err error
	for range 50 {
		if out, err = exec.Command("losetup", "-d", dev).CombinedOutput(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("losetup -d %s: %v\n%s", dev, err, out)
}

// Partition adds partition n of length bytes at start to disk (a loop
// device attached with --partscan), waits for its node and removes it when
// the test ends. start and length are multiples of 512.
func Partition(t testing.TB, disk string, n int, start, length int64) string {
	t.Helper()
	NeedTool(t, "addpart")
	NeedTool(t, "delpart")
	// addpart counts in 512-byte sectors whatever the device's.
	Run(t, "addpart", disk, fmt.Sprint(n), fmt.Sprint(start/512), fmt.Sprint(length/512))
	t.Cleanup(func() { exec.Command("delpart", disk, fmt.Sprint(n)).Run() })
	part := fmt.Sprintf("%sp%d", disk, n)
	for range 250 {
		if _, err := os.Stat(part); err == nil {
			return part
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not appear after addpart", part)
	return ""
}

// Mkfs makes a file system of type fstype (ext4, xfs, btrfs) on dev, with
// extra mkfs options.
func Mkfs(t testing.TB, dev, fstype string, opts ...string) {
	t.Helper()
	tool := "mkfs." + fstype
	NeedTool(t, tool)
	force := "-F"
	if fstype != "ext4" && fstype != "ext2" {
		force = "-f"
	}
	Run(t, tool, append(append([]string{"-q", force}, opts...), dev)...)
}

// Mount mounts dev (a file system of type fstype) on a new temp dir and
// unmounts it when the test ends. It skips the test when the kernel
// refuses the mount (no such file system here).
func Mount(t testing.TB, dev, fstype string, flags uintptr) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount(dev, dir, fstype, flags, ""); err != nil {
		t.Skipf("mount %s (%s) on %s: %v", dev, fstype, dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// HoldExclusive opens dev with O_EXCL, as LVM, md or a VM holding a disk
// would, and closes it when the test ends.
func HoldExclusive(t testing.TB, dev string) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_RDONLY|os.O_EXCL|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open %s O_EXCL: %v", dev, err)
	}
	t.Cleanup(func() { f.Close() })
}
