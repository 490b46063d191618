package e2e

import (
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// TestRefuseSrcMountedReadWrite: a SRC block device whose file system is
// mounted read-write copies inconsistently: refused, naming the mount,
// with no DST made; --force copies it and says so; mounted read-only it
// copies without a word. The same holds for a disk whose partition is
// mounted, and for an image file that a loop device shows, mounted.
func TestRefuseSrcMountedReadWrite(t *testing.T) {
	dev, _ := loopWith(t, 32<<20, false)
	blocktest.Mkfs(t, dev, "ext4")
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	dst := filepath.Join(t.TempDir(), "copy")
	cli(t, dev, dst).want(t, exitRefused, dev+" is mounted on "+mnt+" (ext4)", "read-write", "--force")
	mustNotExist(t, dst)
	cli(t, "--progress", "none", "--force", dev, dst).want(t, exitOK, "--force", dev+" is mounted on "+mnt)

	if err := unix.Mount("", mnt, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", mnt, err)
	}
	ro := filepath.Join(t.TempDir(), "copy")
	r := cli(t, "--progress", "none", dev, ro)
	r.want(t, exitOK)
	// Under a mounted ext4 the device's page cache and its blocks differ
	// (a journal page: the file system writes its blocks past the cache
	// that mkfs filled); the copy reads the blocks, as GNU dd iflag=direct.
	blocks := filepath.Join(t.TempDir(), "blocks")
	blocktest.Run(t, "dd", "if="+dev, "of="+blocks, "iflag=direct", "bs=1M", "status=none")
	if digest(t, ro) != digest(t, blocks) {
		t.Error("the copy of a read-only file system is not byte-identical")
	}
}

// TestRefuseSrcLoopMounted: an image file a loop device shows, mounted
// read-write, is a live file system too; a disk with a mounted partition.
func TestRefuseSrcLoopMounted(t *testing.T) {
	dev, file := loopWith(t, 32<<20, false)
	blocktest.Mkfs(t, dev, "ext4")
	mnt := blocktest.Mount(t, dev, "ext4", 0)
	dst := filepath.Join(t.TempDir(), "copy")
	cli(t, file, dst).want(t, exitRefused, "loop device "+dev+" shows SRC's bytes", "mounted on "+mnt)
	mustNotExist(t, dst)

	disk, _ := loopWith(t, 48<<20, false, "--partscan")
	part := blocktest.Partition(t, disk, 1, 1<<20, 40<<20)
	blocktest.Mkfs(t, part, "ext4")
	pmnt := blocktest.Mount(t, part, "ext4", 0)
	cli(t, disk, dst).want(t, exitRefused, part+" is mounted on "+pmnt)
	mustNotExist(t, dst)
}
