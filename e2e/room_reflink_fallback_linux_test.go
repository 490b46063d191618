package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// TestRoomUncheckedWhenReflinkFallsBack: in auto mode a whole-file copy
// within one XFS or btrfs is planned as a reflink, and checkRoom skips
// such a copy ("a reflink needs no room"). But the reflink is only tried
// in Run, after DST was cut, and where it is refused (XFS made with
// reflink=0, as older mkfs.xfs did and RHEL 7 still does; a NOCOW SRC on
// btrfs) the engine copies every byte. So a copy that --offload never
// refuses in Prepare ("DST's filesystem has 20 MiB free, the copy needs
// 64 MiB"), with DST untouched, instead truncates the existing DST and
// fails with ENOSPC: the room refusal, which could be decided before the
// first write, is lost.
func TestRoomUncheckedWhenReflinkFallsBack(t *testing.T) {
	dev, _ := blocktest.Device(t, 320<<20)
	blocktest.Mkfs(t, dev, "xfs", "-m", "reflink=0")
	mnt := blocktest.Mount(t, dev, "xfs", 0)
	src, dst := filepath.Join(mnt, "src"), filepath.Join(mnt, "dst")
	randomFile(t, src, 64<<20, 91)
	randomFile(t, dst, 4<<20, 92)
	fill(t, filepath.Join(mnt, "filler"), 20<<20)

	// Without offload, Prepare sees the copy cannot fit.
	refused(t, []string{"--offload", "never", src, dst}, []string{dst}, "free, the copy needs")
	// In auto mode the same copy must be refused the same way.
	refused(t, []string{src, dst}, []string{dst}, "free, the copy needs")
}

// fill takes all but leave bytes of the free space of path's filesystem
// with one preallocated file.
func fill(t *testing.T, path string, leave int64) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bfree) * st.Bsize
	if free <= leave {
		t.Fatalf("only %d bytes free", free)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), 0, 0, free-leave); err != nil {
		t.Fatal(err)
	}
}
