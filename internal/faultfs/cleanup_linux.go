package faultfs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringcp/ringcp/internal/mountinfo"
)

// cleanup is Mount's t.Cleanup. A clean Unmount is silent; anything else
// fails the test and falls back to forceUnmount, so that the mount never
// outlives the test (t.TempDir's own cleanup, which runs next, would
// otherwise delete the backing files through it).
func (fs *FS) cleanup(t testing.TB) {
	err := fs.Unmount()
	if err == nil {
		return
	}
	if errors.Is(err, syscall.EBUSY) {
		t.Errorf("%v: a file under the mount is still open (leaked descriptor or io_uring file?); detaching it", err)
	} else {
		t.Errorf("%v; detaching it", err)
	}
	fs.forceUnmount(t)
}

// forceUnmount detaches the mount lazily, aborts its FUSE connection so
// that whatever still holds it gets ENOTCONN and the serve loop ends, and
// waits (bounded) for the server to stop.
func (fs *FS) forceUnmount(t testing.TB) {
	fs.unmountMu.Lock()
	defer fs.unmountMu.Unlock()
	if err := lazyUnmount(fs.Dir); err != nil {
		t.Errorf("faultfs: %v", err)
	}
	if err := abortConn(fs.dev); err != nil {
		t.Logf("faultfs: abort FUSE connection of %s: %v", fs.Dir, err)
	}
	done := make(chan struct{})
	go func() {
		fs.server.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(serveTimeout):
		t.Errorf("faultfs: server of %s still running %v after a forced unmount", fs.Dir, serveTimeout)
	}
	if ok, err := mounted(fs.Dir); err != nil || ok {
		t.Errorf("faultfs: %s still mounted after a forced unmount (%v)", fs.Dir, err)
	}
	fs.unmounted = true
}

// lazyUnmount detaches dir with umount2(MNT_DETACH), which needs
// CAP_SYS_ADMIN, and otherwise with fusermount3 -u -z under
// unmountTimeout.
func lazyUnmount(dir string) error {
	err := unix.Unmount(dir, unix.MNT_DETACH)
	if err == nil || errors.Is(err, unix.EINVAL) {
		// EINVAL: dir is no longer a mount point.
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), unmountTimeout)
	defer cancel()
	out, err2 := exec.CommandContext(ctx, "fusermount3", "-u", "-z", dir).CombinedOutput()
	if err2 != nil {
		return fmt.Errorf("lazy unmount %s: umount2: %v; fusermount3 -u -z: %v %s", dir, err, err2, bytes.TrimSpace(out))
	}
	return nil
}

// abortConn aborts the FUSE connection of the mount on device dev through
// fusectl: connections/N/abort, N being the minor number of the mount's
// anonymous (major 0) device. Where fusectl is not mounted at
// /sys/fs/fuse/connections (containers often lack it), it mounts a private
// instance for the moment, which needs root.
func abortConn(dev uint64) error {
	if dev == 0 || unix.Major(dev) != 0 {
		return fmt.Errorf("mount device %#x is not an anonymous device", dev)
	}
	name := filepath.Join(strconv.FormatUint(uint64(unix.Minor(dev)), 10), "abort")
	err := writeAbort(filepath.Join("/sys/fs/fuse/connections", name))
	if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	dir, err := os.MkdirTemp("", "faultfs-fusectl-")
	if err != nil {
		return err
	}
	defer os.Remove(dir)
	if err := unix.Mount("fusectl", dir, "fusectl", 0, ""); err != nil {
		return fmt.Errorf("mount fusectl: %w", err)
	}
	defer unix.Unmount(dir, unix.MNT_DETACH)
	return writeAbort(filepath.Join(dir, name))
}

// writeAbort writes to a fusectl abort file; any write aborts.
func writeAbort(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte("1"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mounted reports whether dir is a mount point in /proc/self/mountinfo.
func mounted(dir string) (bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		// Field 5 is the mount point, with space, tab, newline and
		// backslash escaped as \ooo (proc_pid_mountinfo(5)).
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && mountinfo.Unescape(fields[4]) == dir {
			return true, nil
		}
	}
	return false, s.Err()
}
