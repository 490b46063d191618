package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestDDStatusSignal: SIGUSR1 makes ringcp dd print dd's records and
// transfer lines while the copy goes on.
func TestDDStatusSignal(t *testing.T) {
	src := slowSrc(t)
	dst := filepath.Join(t.TempDir(), "dst")
	cmd := exec.Command(binary(t), "dd", "if="+src, "of="+dst, "bs=4k", "iflag=direct", "oflag=direct", "status=progress")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, &stderr, " bytes (", 30*time.Second) // status=progress: a line a second
	if err := cmd.Process.Signal(os.Signal(sigUSR1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &stderr, " records out\n", 10*time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v after SIGINT, want 130:\n%s", err, stderr.String())
	}
	out := stderr.String()
	if strings.Count(out, " records in\n") != 2 || !strings.Contains(out, "interrupted by SIGINT") {
		t.Fatalf("want the records lines on SIGUSR1 and at the end:\n%s", out)
	}
}

const sigUSR1 = syscall.SIGUSR1

// lockedBuffer is a process's stderr, read while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitFor(t *testing.T, b *lockedBuffer, s string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q after %v:\n%s", s, limit, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
