package enginetest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/sysblock"
	"golang.org/x/sys/unix"
)

// IOPriority copies at the idle class: the copy is exact and the caps say
// the priority. A class the kernel does not know (5) must fail the copy
// with EINVAL: that proves the priority reaches the kernel, on every
// request (io_uring checks sqe->ioprio when it prepares each one) or on
// the workers' threads (ioprio_set). Then IOPrioScheduled checks that
// the I/O scheduler really sees the class.
func IOPriority(t *testing.T, nb engine.NewBackend) {
	const size, bs = 1<<20 + 4097, 64 << 10
	dir := t.TempDir()
	src := RandomBytes(size, 31)
	srcPath := filepath.Join(dir, "src")
	writeFile(t, srcPath, src)
	for _, direct := range []bool{false, true} {
		dstPath := filepath.Join(dir, "dst-"+strconv.FormatBool(direct))
		job, cleanup := NewJob(t, srcPath, dstPath, direct, bs, 4)
		job.Length, job.FinalSize = size, size
		job.IOPrio = engine.NewIOPrio(engine.IOPrioClassIdle, 0)
		st, err := engine.Run(context.Background(), job, nb)
		cleanup()
		if err != nil {
			t.Fatalf("direct=%v: %v", direct, err)
		}
		CompareFile(t, dstPath, src)
		if !strings.Contains(st.Caps.Detail, "ioprio idle") {
			t.Errorf("caps %q do not say ioprio idle", st.Caps.Detail)
		}
	}
	job, cleanup := NewJob(t, srcPath, filepath.Join(dir, "dst-bad"), true, bs, 4)
	defer cleanup()
	job.Length = size
	job.IOPrio = engine.IOPrio(5 << 13)
	if _, err := engine.Run(context.Background(), job, nb); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("a copy at I/O priority class 5: %v, want EINVAL", err)
	}
}

// IOPrioScheduled copies 64 MiB O_DIRECT at the idle class on the disk
// of the test's temporary folder and watches mq-deadline's count of
// requests per class (debugfs block/DISK/sched/queued and
// owned_by_driver: RT, BE, IDLE): idle requests must show up. Nothing
// else on the machine runs at the idle class, so they are this copy's.
func IOPrioScheduled(t *testing.T, nb engine.NewBackend) {
	dir := t.TempDir()
	files := schedFiles(t, dir)
	const size, bs = 64 << 20, 1 << 20
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	src := RandomBytes(size, 5)
	writeFile(t, srcPath, src)
	job, cleanup := NewJob(t, srcPath, dstPath, true, bs, 8)
	defer cleanup()
	job.Length, job.FinalSize = size, size
	job.IOPrio = engine.NewIOPrio(engine.IOPrioClassIdle, 0)
	var seen atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, f := range files {
				seen.Add(idleColumn(f))
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	_, err := engine.Run(context.Background(), job, nb)
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	CompareFile(t, dstPath, src)
	if seen.Load() == 0 {
		t.Fatalf("mq-deadline never held an idle-class request while the copy ran (%v)", files)
	}
}

// schedFiles finds mq-deadline's per-class counts of the disk under dir,
// mounting debugfs for the test when it is not mounted. It skips where
// the disk has another scheduler.
func schedFiles(t *testing.T, dir string) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to read debugfs")
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	q, ok := sysblock.QueueOf(st.Dev)
	if !ok {
		t.Skipf("%s is not on a block device", dir)
	}
	sched, _ := os.ReadFile(filepath.Join(q.Dir, "scheduler"))
	if !strings.Contains(string(sched), "[mq-deadline]") {
		t.Skipf("%s's disk schedules with %q, not mq-deadline", dir, strings.TrimSpace(string(sched)))
	}
	disk := filepath.Base(filepath.Dir(q.Dir))
	base := debugfs(t)
	var files []string
	for _, name := range []string{"queued", "owned_by_driver"} {
		f := filepath.Join(base, "block", disk, "sched", name)
		if _, err := os.Stat(f); err != nil {
			t.Skipf("no mq-deadline statistics in debugfs: %v", err)
		}
		files = append(files, f)
	}
	return files
}

// debugfs is where debugfs is mounted, or a mount of it made for the test.
func debugfs(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/debug/block"); err == nil {
		return "/sys/kernel/debug"
	}
	mnt := t.TempDir()
	if err := unix.Mount("debugfs", mnt, "debugfs", 0, ""); err != nil {
		t.Skipf("cannot mount debugfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
			t.Errorf("umount debugfs: %v", err)
		}
	})
	return mnt
}

// idleColumn reads the third of "RT BE IDLE" counts, 0 on any error.
func idleColumn(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return 0
	}
	n, _ := strconv.ParseInt(f[2], 10, 64)
	return n
}

// Blocking copies with every read and write issued blocking
// (Job.Blocking): exact, and io_uring says it sets IOSQE_ASYNC.
func Blocking(t *testing.T, nb engine.NewBackend) {
	const size, bs = 3<<20 + 4097, 256 << 10
	dir := t.TempDir()
	src := RandomBytes(size, 41)
	srcPath, dstPath := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeFile(t, srcPath, src)
	job, cleanup := NewJob(t, srcPath, dstPath, true, bs, 4)
	defer cleanup()
	job.Length, job.FinalSize, job.Blocking = size, size, true
	st, err := engine.Run(context.Background(), job, nb)
	if err != nil {
		t.Fatal(err)
	}
	CompareFile(t, dstPath, src)
	if st.Backend == "io_uring" && !strings.Contains(st.Caps.Detail, "IOSQE_ASYNC") {
		t.Errorf("caps %q do not say IOSQE_ASYNC", st.Caps.Detail)
	}
}
