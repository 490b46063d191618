package engine

import (
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The io-wq workers of a thread are threads of the process named
// "iou-wrk-<tid>" after the thread they work for. io_uring runs there what
// cannot complete without blocking: fdatasync, fallocate, and writes that
// would wait. A worker finishes a request in two steps: it queues the
// completion (which our io_uring_enter posts as the CQE), then drops its
// own reference to the request. When the CQE is reaped first, the request,
// and the file it holds, are freed only by deferred work the worker queues
// afterwards. If the ring is closed before that work runs, the kernel's
// teardown of the ring (io_ring_exit_work, a kworker) drops the last
// reference to DST's file, and a kworker's fput is itself deferred
// (delayed_fput): DST's file system stays busy for a few milliseconds
// after ringcp exits, and "ringcp img /mnt/img && umount /mnt" failed with
// EBUSY about once in 400 copies on a loaded machine.
const (
	iowqIdleWait  = time.Second // at most, then close anyway
	iowqIdlePause = 50 * time.Microsecond
)

// waitIOWQIdle waits until no io-wq worker of this thread is running or
// runnable: between queueing a completion and dropping its reference a
// worker never sleeps, so once every worker sleeps, every reference it
// held on a finished request has been handed over as deferred work. It is
// called on the ring's thread once everything was reaped, and reads only
// /proc; where /proc is missing it returns at once.
func waitIOWQIdle() {
	prefix := "iou-wrk-" + strconv.Itoa(unix.Gettid())
	deadline := time.Now().Add(iowqIdleWait)
	for busyWorker(prefix) && time.Now().Before(deadline) {
		time.Sleep(iowqIdlePause)
	}
}

// busyWorker reports whether a thread named prefix is in state R.
func busyWorker(prefix string) bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	for _, t := range tasks {
		stat, err := os.ReadFile("/proc/self/task/" + t.Name() + "/stat")
		if err != nil {
			continue // the thread exited meanwhile
		}
		// "tid (comm) S ...": comm sits in parentheses, the state after.
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || end+2 >= len(s) {
			continue
		}
		if s[open+1:end] == prefix && s[end+2] == 'R' {
			return true
		}
	}
	return false
}
