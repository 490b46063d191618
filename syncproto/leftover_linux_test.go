package syncproto

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/synctest"
)

// A remote ringcp killed with SIGKILL while it creates DST leaves its
// temporary file behind; the next sync to that DST clears it away (as a
// copy's next run clears its own) instead of leaving one more full-size
// hidden file per killed run, which nothing ever removed.
func TestSSHKilledCreateLeavesNothing(t *testing.T) {
	o := startSSH(t)
	const size = 64 << 20
	d := t.TempDir()
	srcPath, dstPath := filepath.Join(d, "src"), filepath.Join(d, "dst")
	src := synctest.Random(51, size)
	synctest.WriteFile(t, srcPath, src)
	var p blocksync.Progress
	stop := make(chan struct{})
	go func() {
		for p.Changed.Load() < 8<<20 {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(mustRead(t, o.pid))))
		if err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	_, err := o.push(t, context.Background(), srcPath, dstPath, Options{Create: true, Progress: &p})
	close(stop)
	if err == nil {
		t.Fatal("a sync whose remote ringcp was killed succeeded")
	}
	if left, _ := filepath.Glob(filepath.Join(d, ".dst.*")); len(left) == 0 {
		t.Fatal("the killed remote ringcp left no temporary file: nothing to test")
	}
	if _, err := o.push(t, context.Background(), srcPath, dstPath, Options{Create: true}); err != nil {
		t.Fatal(err)
	}
	synctest.Same(t, dstPath, src)
	if left, _ := filepath.Glob(filepath.Join(d, ".dst.*")); len(left) != 0 {
		t.Fatalf("left behind after the sync that followed: %v", left)
	}
}
