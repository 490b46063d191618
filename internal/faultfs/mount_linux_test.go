package faultfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestUnmount checks that Mount's cleanup leaves no mount behind, and that
// Unmount reports a file left open as EBUSY and succeeds once it is closed.
func TestUnmount(t *testing.T) {
	back := t.TempDir()
	writeBacking(t, back, "a", pattern(4096))

	var dir string
	t.Run("cleanup", func(t *testing.T) {
		fs := mountT(t, back)
		dir = fs.Dir
		if ok, err := mounted(dir); !ok || err != nil {
			t.Fatalf("mounted(%s) = %v, %v after Mount", dir, ok, err)
		}
		if _, err := os.ReadFile(fs.Path("a")); err != nil {
			t.Fatal(err)
		}
	})
	if ok, err := mounted(dir); ok || err != nil {
		t.Fatalf("mounted(%s) = %v, %v after the cleanup", dir, ok, err)
	}

	fs := mountT(t, back)
	f, err := os.Open(fs.Path("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Unmount(); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Unmount with a file open = %v, want EBUSY", err)
	}
	if ok, _ := mounted(fs.Dir); !ok {
		t.Errorf("a failed Unmount left %s unmounted", fs.Dir)
	}
	f.Close()
	if err := fs.Unmount(); err != nil {
		t.Fatalf("Unmount after close: %v", err)
	}
	if ok, err := mounted(fs.Dir); ok || err != nil {
		t.Errorf("mounted(%s) = %v, %v after Unmount", fs.Dir, ok, err)
	}
	if err := fs.Unmount(); err != nil {
		t.Errorf("second Unmount: %v", err)
	}
}

// recordTB runs Mount under a test whose Errorf and Cleanup are recorded,
// so the cleanup's complaints can be checked.
type recordTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recordTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *recordTB) runCleanups() {
	for _, f := range slices.Backward(r.cleanups) {
		f()
	}
}

// TestCleanupDetachesBusyMount leaks a descriptor past the cleanup: the
// cleanup must fail the test, saying so, and still remove the mount and
// stop the server (by aborting the connection) without hanging.
func TestCleanupDetachesBusyMount(t *testing.T) {
	back := t.TempDir()
	writeBacking(t, back, "a", pattern(4096))
	if os.Geteuid() != 0 {
		t.Skip("faultfs tests need root: they mount with mount(2)")
	}
	rec := &recordTB{TB: t}
	fs := Mount(rec, back)
	leaked, err := os.Open(fs.Path("a"))
	if err != nil {
		t.Fatal(err)
	}
	defer leaked.Close()

	start := time.Now()
	rec.runCleanups()
	t.Logf("cleanup took %v; it reported %q", time.Since(start), rec.errs)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "still open") {
		t.Errorf("cleanup reported %q, want one error about a file still open", rec.errs)
	}
	if ok, err := mounted(fs.Dir); ok || err != nil {
		t.Errorf("mounted(%s) = %v, %v after the cleanup", fs.Dir, ok, err)
	}
	if _, err := leaked.Read(make([]byte, 1)); !errors.Is(err, syscall.ENOTCONN) {
		t.Errorf("read from the leaked file after the abort: %v, want ENOTCONN", err)
	}
}

// TestDirectory checks the directory operations a copy's destination side
// needs: listing, create, rename, unlink, chmod, utimes, statfs.
func TestDirectory(t *testing.T) {
	back := t.TempDir()
	writeBacking(t, back, "a", pattern(10))
	if err := os.Mkdir(filepath.Join(back, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(back, "link")); err != nil {
		t.Fatal(err)
	}
	fs := mountT(t, back)

	names := func() []string {
		t.Helper()
		ents, err := os.ReadDir(fs.Dir)
		if err != nil {
			t.Fatal(err)
		}
		var ns []string
		for _, e := range ents {
			ns = append(ns, e.Name())
		}
		return ns
	}
	if got := names(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("listing = %q, want only the regular file", got)
	}
	if _, err := os.Stat(fs.Path("sub")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat of a backing directory through the mount: %v, want ENOENT", err)
	}
	if err := os.WriteFile(fs.Path("b"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fs.Path("b"), fs.Path("c")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(fs.Path("a")); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Equal(got, []string{"c"}) {
		t.Errorf("listing after create, rename, unlink = %q, want [c]", got)
	}
	if err := os.Chmod(fs.Path("c"), 0o640); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1_000_000_000, 5)
	if err := os.Chtimes(fs.Path("c"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(back, "c"))
	if err != nil || st.Mode().Perm() != 0o640 || !st.ModTime().Equal(mtime) {
		t.Errorf("backing c: %v, %v; want mode 0640 and mtime %v", st.Mode(), st.ModTime(), mtime)
	}
	var sfs, bfs unix.Statfs_t
	if err := unix.Statfs(fs.Dir, &sfs); err != nil || unix.Statfs(back, &bfs) != nil || sfs.Blocks != bfs.Blocks {
		t.Errorf("statfs through the mount: %d blocks, %v; backing %d", sfs.Blocks, err, bfs.Blocks)
	}
}

// TestConcurrentFaults reads one file from several goroutines at once, so
// the race detector sees hits recorded concurrently. O_DIRECT sends each
// read to the server; through the page cache, readers of the same page can
// share one failed READ.
func TestConcurrentFaults(t *testing.T) {
	back := t.TempDir()
	writeBacking(t, back, "a", pattern(1<<20))
	fs := mountT(t, back, Fault{Op: OpRead, Offset: faultAt, Errno: syscall.EIO})

	const readers = 8
	bufs := make([][]byte, readers)
	for i := range bufs {
		bufs[i] = alignedBuf(t, 4096)
	}
	errs := make([]error, readers)
	var wg sync.WaitGroup
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fd, err := unix.Open(fs.Path("a"), unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
			if err != nil {
				errs[i] = err
				return
			}
			defer unix.Close(fd)
			_, errs[i] = unix.Pread(fd, bufs[i], faultAt-int64(i))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("reader %d: %v, want EIO", i, err)
		}
	}
	hits := fs.Hits()
	if len(hits) != readers {
		t.Errorf("%d hits for %d failed reads: %v", len(hits), readers, hits)
	}
	checkHits(t, hits, OpRead, "a", faultAt, syscall.EIO)
}

// TestFuseFDCloseOnExec checks that the server's /dev/fuse descriptor does
// not leak into the children a test runs.
func TestFuseFDCloseOnExec(t *testing.T) {
	mountT(t, t.TempDir())
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l != "/dev/fuse" {
			continue
		}
		found = true
		fd, _ := strconv.Atoi(e.Name())
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
			t.Errorf("/dev/fuse descriptor %d: F_GETFD = %#x, %v; want FD_CLOEXEC", fd, fl, err)
		}
	}
	if !found {
		t.Errorf("no /dev/fuse descriptor in /proc/self/fd")
	}
}

func TestSkipReason(t *testing.T) {
	if r := skipReason(fmt.Errorf("mount: %w", syscall.EPERM)); r == "" {
		t.Errorf("EPERM from mount is not a reason to skip")
	}
	if r := skipReason(syscall.EINVAL); os.Geteuid() == 0 && r != "" {
		t.Errorf("EINVAL from mount(2) as root skips (%q); it should fail the test", r)
	}
}
