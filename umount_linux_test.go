package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/sys/unix"
)

// TestUnmountRightAfterCopy: once ringcp has exited, DST's file system can
// be unmounted at once, as in "ringcp img /mnt/img && umount /mnt". The
// kernel tears a closed io_uring down later, in a worker, and the files
// registered with it kept the file system busy until then: umount failed
// with EBUSY four times in five before the backend unregistered them.
func TestUnmountRightAfterCopy(t *testing.T) {
	uringtest.NeedOn(t)
	dev := blocktest.Loop(t, blocktest.SparseFile(t, 64<<20))
	blocktest.Mkfs(t, dev, "ext4")
	src := filepath.Join(t.TempDir(), "src")
	randomFile(t, src, 8<<20, 9)
	bin := binary(t)
	mnt := t.TempDir()
	for i := range 5 {
		if err := unix.Mount(dev, mnt, "ext4", 0, ""); err != nil {
			t.Fatalf("mount: %v", err)
		}
		out, err := exec.Command(bin, "--engine", "uring", "-q", "4", src, filepath.Join(mnt, "dst")).CombinedOutput()
		if err != nil {
			unix.Unmount(mnt, unix.MNT_DETACH)
			t.Fatalf("copy %d: %v\n%s", i, err, out)
		}
		if err := unix.Unmount(mnt, 0); err != nil {
			unix.Unmount(mnt, unix.MNT_DETACH)
			t.Fatalf("umount right after copy %d: %v", i, err)
		}
	}
}
