package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/uringtest"
	"golang.org/x/sys/unix"
)

// unmountRounds: the failure this test guards against showed about once in
// a few dozen copies on a loaded machine, so one copy proves little.
const unmountRounds = 50

// TestUnmountRightAfterCopy: once ringcp has exited, DST's file system can
// be unmounted at once, as in "ringcp img /mnt/img && umount /mnt". The
// kernel tears a closed io_uring down later, in a worker, and whatever the
// ring still references then keeps the file system busy: umount failed
// with EBUSY four times in five while the backend left its files
// registered, and then still now and then under load until the ring's
// teardown was waited for (engine/uring_linux.go, Close).
func TestUnmountRightAfterCopy(t *testing.T) {
	uringtest.NeedOn(t)
	dev := blocktest.Loop(t, blocktest.SparseFile(t, 64<<20))
	blocktest.Mkfs(t, dev, "ext4")
	src := filepath.Join(t.TempDir(), "src")
	randomFile(t, src, 8<<20, 9)
	bin := binary(t)
	mnt := t.TempDir()
	for i := range unmountRounds {
		if err := unix.Mount(dev, mnt, "ext4", 0, ""); err != nil {
			t.Fatalf("mount: %v", err)
		}
		out, err := exec.Command(bin, "--engine", "uring", "-q", "4", src, filepath.Join(mnt, "dst")).CombinedOutput()
		if err != nil {
			unix.Unmount(mnt, unix.MNT_DETACH)
			t.Fatalf("copy %d: %v\n%s", i, err, out)
		}
		if err := unix.Unmount(mnt, 0); err != nil {
			holders := mountHolders(mnt)
			waited := waitUnmount(mnt)
			t.Fatalf("umount right after copy %d of %d: %v (holders: %s; %s)", i, unmountRounds, err, holders, waited)
		}
	}
}

// mountHolders names the processes with a descriptor, a working directory
// or a mapping under mnt, so a failure says whether a process or the
// kernel held the file system.
func mountHolders(mnt string) string {
	var found []string
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range pids {
		links, _ := filepath.Glob(p + "/fd/*")
		links = append(links, p+"/cwd", p+"/root")
		for _, l := range links {
			if dst, err := os.Readlink(l); err == nil && strings.HasPrefix(dst, mnt) {
				comm, _ := os.ReadFile(p + "/comm")
				found = append(found, fmt.Sprintf("%s(%s) %s", filepath.Base(p), strings.TrimSpace(string(comm)), l))
			}
		}
	}
	if len(found) == 0 {
		return "no process"
	}
	return strings.Join(found, ", ")
}

// waitUnmount retries the unmount for a while to tell a reference that
// goes away by itself (a kernel worker finishing) from one that stays.
func waitUnmount(mnt string) string {
	start := time.Now()
	for time.Since(start) < 10*time.Second {
		if unix.Unmount(mnt, 0) == nil {
			return fmt.Sprintf("unmounted %v later", time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(time.Millisecond)
	}
	unix.Unmount(mnt, unix.MNT_DETACH)
	return "still busy after 10s, detached"
}
