package faultfs

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

const (
	// unmountTimeout bounds one server.Unmount and the lazy fallback,
	// so a wedged server or kernel cannot hang the test binary.
	unmountTimeout = 10 * time.Second

	// busyWait is how long Unmount keeps retrying EBUSY before it
	// calls the mount leaked. The kernel tears an io_uring ring down
	// asynchronously (io_ring_exit_work), so files registered with, or
	// in flight on, a ring that was just closed hold the mount for a
	// moment after close returns.
	busyWait = 2 * time.Second

	// serveTimeout bounds the wait for the serve loop after a forced
	// unmount.
	serveTimeout = 5 * time.Second
)

// Mount serves every regular file in backingDir under a new mount point
// (made with t.TempDir), applying faults to every file (or, for a fault
// with a Name, to that file). It skips the test, with the reason, when
// /dev/fuse is missing or mounting is not permitted, and fails it when a
// fault is malformed or backingDir is not a directory. t.Cleanup unmounts
// the file system and fails the test if the mount was still busy (a file
// under it left open) or could not be removed.
func Mount(t testing.TB, backingDir string, faults ...Fault) *FS {
	t.Helper()
	return MountWith(t, backingDir, Options{Faults: faults})
}

// MountWith is Mount with the modes of opts: FOPEN_DIRECT_IO, sizes that
// claim more than the server serves.
func MountWith(t testing.TB, backingDir string, opts Options) *FS {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("faultfs: FUSE is not available: %v", err)
	}
	if err := opts.validate(); err != nil {
		t.Fatal(err)
	}
	backing, err := filepath.Abs(backingDir)
	if err != nil {
		t.Fatalf("faultfs: backing directory: %v", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		t.Fatalf("faultfs: backing directory: %v", &os.PathError{Op: "stat", Path: backing, Err: err})
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		t.Fatalf("faultfs: backing %s is not a directory", backing)
	}

	fs := &FS{Dir: t.TempDir(), Backing: backing, faults: slices.Clone(opts.Faults),
		directIO: opts.DirectIO, passDirect: opts.PassDirect, inflate: maps.Clone(opts.Inflate)}
	server, err := fusefs.Mount(fs.Dir, &rootNode{fsys: fs}, options(&st))
	if err != nil {
		if reason := skipReason(err); reason != "" {
			t.Skipf("faultfs: cannot mount %s: %s: %v", fs.Dir, reason, err)
		}
		t.Fatalf("faultfs: mount %s: %v", fs.Dir, err)
	}
	fs.server = server
	t.Cleanup(func() { fs.cleanup(t) })
	closeFuseOnExec()

	var mst syscall.Stat_t
	if err := syscall.Stat(fs.Dir, &mst); err != nil {
		t.Fatalf("faultfs: stat mount point: %v", err)
	}
	fs.dev = mst.Dev
	return fs
}

// options returns the go-fuse options for a mount of the directory st.
func options(st *syscall.Stat_t) *fusefs.Options {
	// Zero entry and attribute timeouts make the kernel ask the server
	// on every lookup and stat, so a stat through the mount always
	// shows the backing file's real size, even after a change made
	// behind the mount's back.
	var zero time.Duration
	return &fusefs.Options{
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		RootStableAttr:  &fusefs.StableAttr{Mode: syscall.S_IFDIR, Ino: st.Ino},
		MountOptions: fuse.MountOptions{
			FsName:   "faultfs",
			Name:     "faultfs",
			MaxWrite: MaxRequest, // also the mount's max_read
			// Root mounts with mount(2) itself, so a refusal
			// arrives as an errno and unmount is umount(2);
			// anyone else goes through fusermount3.
			DirectMountStrict: os.Geteuid() == 0,
			// ENOSYS for xattrs makes the kernel stop asking;
			// otherwise it looks up security.capability before
			// writes.
			DisableXAttrs: true,
		},
	}
}

// closeFuseOnExec marks every /dev/fuse descriptor of the process
// close-on-exec. go-fuse's direct mount (v2.12.1, mountDirect) opens
// /dev/fuse without O_CLOEXEC, so every child a test runs (the ringcp
// binary, fio) would inherit the server's end of the connection, and one
// that outlives a crashed test process keeps its mount hanging instead of
// failing with ENOTCONN. The descriptors of other mounts need the flag as
// much as this one's.
func closeFuseOnExec() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "/dev/fuse" {
			syscall.CloseOnExec(fd)
		}
	}
}

// skipReason says why a failed mount means this machine cannot mount FUSE
// file systems here, or returns "" for a failure the test should report.
func skipReason(err error) string {
	switch {
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return "mounting is not permitted (no CAP_SYS_ADMIN in this namespace?)"
	case errors.Is(err, syscall.ENODEV):
		return "the kernel has no fuse file system"
	case os.Geteuid() != 0:
		// fusermount3 reports only an exit status, and its refusals
		// (no binary, not setuid, mount point policy) are all about
		// permission.
		return "not root, and fusermount3 failed"
	}
	return ""
}

// Unmount unmounts the file system and waits for its server to stop. It
// fails, wrapping syscall.EBUSY, while anything still holds a file under
// the mount (an open descriptor, an io_uring registered file or request in
// flight, a working directory), so a test can assert that nothing leaked;
// the mount then stays up and the cleanup detaches it. Unmounting an
// unmounted FS returns nil.
func (fs *FS) Unmount() error {
	fs.unmountMu.Lock()
	defer fs.unmountMu.Unlock()
	if fs.unmounted {
		return nil
	}
	if fs.stuck {
		return fmt.Errorf("faultfs: unmount %s: an earlier unmount is still hanging", fs.Dir)
	}
	deadline := time.Now().Add(busyWait)
	for {
		err := fs.unmountOnce()
		if err == nil {
			fs.unmounted = true
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("faultfs: unmount %s: %w", fs.Dir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// unmountOnce runs server.Unmount (which itself retries EBUSY for about
// 0.3 s) under unmountTimeout. On timeout the call is left running and fs
// is marked stuck, so that nothing calls it again concurrently.
func (fs *FS) unmountOnce() error {
	done := make(chan error, 1)
	go func() { done <- fs.server.Unmount() }()
	timer := time.NewTimer(unmountTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		fs.stuck = true
		return fmt.Errorf("server did not unmount within %v", unmountTimeout)
	}
}
