package e2e

import (
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/qemutest"
	"golang.org/x/sys/unix"
)

// TestQemuServedDeviceWrittenThroughOtherNode: a block device that
// qemu-nbd (or a VM: QEMU does not open host devices with O_EXCL) serves
// writable is protected only by QEMU's OFD locks, and those sit on the
// inode of the device node QEMU opened. ringcp tests the locks of DST's
// own node only, so the same bytes reached through another node are
// written, with exit 0, under the running server: a partition of the
// served disk, the disk of a served partition, or a second node for the
// same device (a container's /dev, mknod), or a loop device over the
// served image file. Each must be refused, like DST's own node is.
func TestQemuServedDeviceWrittenThroughOtherNode(t *testing.T) {
	qemutest.Need(t, "qemu-nbd")
	// 4 MiB from offset 0: on the disk, that covers the partition's
	// first 3 MiB (it starts at 1 MiB).
	src, _ := srcFile(t, 4<<20)
	cases := []struct {
		name  string
		serve func(disk, part string) string // the node qemu-nbd opens
		write func(t *testing.T, disk, part string) string
	}{
		{"partition of the served disk",
			func(disk, _ string) string { return disk },
			func(_ *testing.T, _, part string) string { return part }},
		{"disk of the served partition",
			func(_, part string) string { return part },
			func(_ *testing.T, disk, _ string) string { return disk }},
		{"another node of the served disk",
			func(disk, _ string) string { return disk },
			func(t *testing.T, disk, _ string) string { return aliasNode(t, disk) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			disk, file := loopWith(t, 64<<20, true, "--partscan")
			part := blocktest.Partition(t, disk, 1, 1<<20, 16<<20)
			qemutest.NBD(t, c.serve(disk, part))
			refused(t, []string{src, c.write(t, disk, part)}, []string{file}, "qemu-nbd")
		})
	}
	// A loop device over an image file that qemu-nbd serves: the locks
	// are on the file, below DST.
	t.Run("loop device over the served image", func(t *testing.T) {
		dev, file := loopWith(t, 32<<20, true)
		qemutest.NBD(t, file)
		refused(t, []string{src, dev}, []string{file}, "qemu-nbd")
	})
	// The same hole for SRC: reading a partition of a disk that qemu-nbd
	// serves writable is an inconsistent copy, refused without --force
	// when SRC is the served node itself.
	t.Run("SRC: partition of the served disk", func(t *testing.T) {
		disk, _ := loopWith(t, 64<<20, true, "--partscan")
		part := blocktest.Partition(t, disk, 1, 1<<20, 16<<20)
		qemutest.NBD(t, disk)
		dst := filepath.Join(t.TempDir(), "copy")
		cli(t, part, dst).want(t, exitRefused, "qemu-nbd")
	})
}

// aliasNode makes a second device node for dev's device in a temp dir.
func aliasNode(t *testing.T, dev string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(t.TempDir(), "alias")
	if err := unix.Mknod(node, unix.S_IFBLK|0o600, int(st.Rdev)); err != nil {
		t.Fatal(err)
	}
	return node
}
