// Package looptest makes real block devices and filesystems for tests:
// loop devices over files in the test's temp dir (losetup), filesystems
// made on them (mkfs) and mounted, all undone in t.Cleanup. Tests that use
// it skip with the reason when not root or when a tool is missing.
package looptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// NeedRoot skips the test unless it runs as root with every tool named.
func NeedRoot(t testing.TB, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for loop devices and mounts")
	}
	for _, name := range tools {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("%s is not installed: %v", name, err)
		}
	}
}

// Run runs a command and returns its trimmed output; failure fails the test
// with the output.
func Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Options shape a loop device.
type Options struct {
	SectorSize int  // 0: the default 512
	Direct     bool // --direct-io=on: the loop device does O_DIRECT to its file
}

// Device attaches a new sparse file of size bytes to a free loop device
// and returns the device path and the backing file. Both go away at the
// end of the test.
func Device(t testing.TB, size int64, o Options) (dev, backing string) {
	t.Helper()
	backing = filepath.Join(t.TempDir(), "backing.img")
	f, err := os.Create(backing)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(size)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return Attach(t, backing, o), backing
}

// Attach attaches an existing file to a free loop device.
func Attach(t testing.TB, file string, o Options) string {
	t.Helper()
	NeedRoot(t, "losetup")
	args := []string{"--find", "--show"}
	if o.Direct {
		args = append(args, "--direct-io=on")
	}
	if o.SectorSize != 0 {
		args = append(args, "--sector-size", strconv.Itoa(o.SectorSize))
	}
	dev := Run(t, "losetup", append(args, file)...)
	t.Cleanup(func() { detach(t, dev) })
	return dev
}

// detach retries briefly: io_uring drops its file references
// asynchronously after a ring closes, and udev may still hold the device.
func detach(t testing.TB, dev string) {
	var out []byte
	var err error
	for i := 0; i < 50; i++ {
		if out, err = exec.Command("losetup", "-d", dev).CombinedOutput(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("losetup -d %s: %v\n%s", dev, err, out)
}

// Mount makes a filesystem of type fstype (ext4, xfs, btrfs) on dev with
// extra mkfs arguments, mounts it on a new temp dir and returns the dir.
func Mount(t testing.TB, dev, fstype string, mkfsArgs ...string) string {
	t.Helper()
	mkfs := "mkfs." + fstype
	NeedRoot(t, mkfs, "mount", "umount")
	force := "-F"
	if fstype != "ext4" {
		force = "-f"
	}
	Run(t, mkfs, append(append([]string{"-q", force}, mkfsArgs...), dev)...)
	dir := t.TempDir()
	Run(t, "mount", dev, dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", dir, err, out)
		}
	})
	return dir
}
