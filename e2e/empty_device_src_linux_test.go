package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// TestEmptyDeviceSrcWipesDst: a block device of size 0 as SRC is a disk
// that is not there: a loop device with nothing bound to it (losetup
// failed, or was never run), an nbd device whose client is not connected
// (qemu-nbd -c failed), a card reader without a card on some drivers.
// `ringcp /dev/loopN backup.img` then replaces the existing backup.img by
// an empty file and exits 0, "copied 0 B": a backup script wipes its
// last good backup and reports success. Like the pseudo files of issue
// 10 §2 (made-up sizes of 0), this is not a disk anyone copies: it must
// be refused, with DST left as it was.
func TestEmptyDeviceSrcWipesDst(t *testing.T) {
	blocktest.NeedRoot(t)
	dev := unboundLoop(t)
	dst := filepath.Join(t.TempDir(), "backup.img")
	randomFile(t, dst, 4<<20, 81)
	refused(t, []string{dev, dst}, []string{dst}, dev)
}

// unboundLoop adds a loop device with nothing bound to it (LOOP_CTL_ADD,
// at a high index that losetup --find does not reach first) and removes
// it when the test ends.
func unboundLoop(t *testing.T) string {
	t.Helper()
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no loop-control: %v", err)
	}
	defer ctl.Close()
	for range 20 {
		idx := 2000 + rand.IntN(10000)
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, ctl.Fd(), unix.LOOP_CTL_ADD, uintptr(idx))
		if errno == unix.EEXIST {
			continue
		}
		if errno != 0 {
			t.Skipf("LOOP_CTL_ADD: %v", errno)
		}
		t.Cleanup(func() {
			c, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
			if err == nil {
				unix.Syscall(unix.SYS_IOCTL, c.Fd(), unix.LOOP_CTL_REMOVE, uintptr(idx))
				c.Close()
			}
		})
		dev := fmt.Sprintf("/dev/loop%d", idx)
		for range 100 {
			if _, err := os.Stat(dev); err == nil {
				return dev
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%s did not appear", dev)
	}
	t.Skip("no free loop index")
	return ""
}
