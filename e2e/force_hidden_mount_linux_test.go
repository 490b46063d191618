package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// A filesystem can be mounted with no process to find it through: in a
// mount namespace kept alive by a bind mount of its nsfs file (unshare
// --mount=FILE, ip netns style), or detached with umount -l while a file
// on it is still open. The kernel still holds the device for it and
// writes it. guard only reads the mount tables of namespaces that have a
// process, so the device shows as "open exclusively", and --force writes
// over the live filesystem. These tests assert the promise: --force never
// writes a mounted filesystem.

// TestForceWritesMountInNamespaceWithoutProcess: a device mounted only in
// a persistent mount namespace that no process is in.
func TestForceWritesMountInNamespaceWithoutProcess(t *testing.T) {
	blocktest.NeedTool(t, "unshare")
	blocktest.NeedTool(t, "nsenter")
	dev, file := loopWith(t, 32<<20, false)
	blocktest.Mkfs(t, dev, "ext4")
	mnt := t.TempDir()
	nsDir := t.TempDir()
	// unshare --mount=FILE binds the namespace to FILE, which must be on
	// a private mount.
	blocktest.Run(t, "mount", "--bind", nsDir, nsDir)
	t.Cleanup(func() { unix.Unmount(nsDir, unix.MNT_DETACH) })
	blocktest.Run(t, "mount", "--make-private", nsDir)
	nsFile := filepath.Join(nsDir, "ns")
	if err := os.WriteFile(nsFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	blocktest.Run(t, "unshare", "--mount="+nsFile, "--propagation", "private", "mount", "-o", "ro", dev, mnt)
	t.Cleanup(func() {
		exec.Command("nsenter", "--mount="+nsFile, "umount", mnt).Run()
		unix.Unmount(nsFile, 0)
	})
	// The unshare process has exited: only the bind mount keeps the
	// namespace, and the filesystem in it, alive.
	src, _ := srcFile(t, 1<<20)
	refused(t, []string{"--force", src, dev}, []string{file}, mountedNever)
}

// TestForceWritesLazilyUnmountedFilesystem: umount -l removes the mount
// from every table, but the filesystem lives on while a file on it is
// open, and so does its claim on the device.
func TestForceWritesLazilyUnmountedFilesystem(t *testing.T) {
	dev, file := loopWith(t, 32<<20, false)
	blocktest.Mkfs(t, dev, "ext4")
	mnt := t.TempDir()
	if err := unix.Mount(dev, mnt, "ext4", unix.MS_RDONLY, ""); err != nil {
		t.Skipf("mount %s: %v", dev, err)
	}
	open, err := os.Open(mnt)
	if err != nil {
		unix.Unmount(mnt, 0)
		t.Fatal(err)
	}
	// Closing the last file ends the detached filesystem.
	t.Cleanup(func() { open.Close() })
	if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	src, _ := srcFile(t, 1<<20)
	refused(t, []string{"--force", src, dev}, []string{file}, mountedNever)
}
