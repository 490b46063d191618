package blocksync

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
)

// A DST the sync creates is open to its owner only, whatever the umask
// (0 in some daemons' and ssh sessions' environments): it holds a disk,
// whose SRC may have been the owner's alone, and the other end of a sync
// across hosts does not know SRC's mode. It was created 0666 & ~umask:
// readable by all under the usual umask 022, writable by all under 0.
func TestCreatedTargetMode(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "dst")
	dst, err := OpenTarget(path, TargetOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := dst.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Fatalf("a new DST has mode %v, want -rw-------", perm)
	}
}

// A missing DST in /dev (devtmpfs) is a mistyped device node, not a new
// file to fill the RAM with: refused unless Force, as a copy refuses it.
func TestCreateInDevRefused(t *testing.T) {
	blocktest.NeedRoot(t)
	path := "/dev/ringcp-blocksync-no-such-disk"
	t.Cleanup(func() { os.Remove(path) })
	dst, err := OpenTarget(path, TargetOptions{Create: true})
	if err == nil {
		dst.Close()
	}
	wantRefused(t, err, KindNotFound, "devtmpfs")
	if left, _ := filepath.Glob("/dev/.ringcp-blocksync-no-such-disk*"); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// The temporary name of a new DST: one a killed sync left (unlocked) is
// taken over; one another sync holds (locked) is refused, untouched.
func TestCreateTargetLeftover(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dst")
	temp := filepath.Join(dir, ".dst.ringcp-sync")
	if err := os.WriteFile(temp, []byte("left by a killed sync"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst, err := OpenTarget(path, TargetOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if dst.Size() != 0 {
		t.Fatalf("the new DST holds %d bytes of the leftover", dst.Size())
	}
	other, err := OpenTarget(path, TargetOptions{Create: true})
	if err == nil {
		other.Close()
	}
	wantRefused(t, err, KindLocked, "another ringcp sync is creating DST")
	dst.Close()
	if left, _ := filepath.Glob(filepath.Join(dir, ".dst*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}
