package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestStderrGoneMidCopy: ringcp's stderr is a pipe whose reader goes away
// while the copy runs: `ssh host ringcp --progress always ...` (no
// terminal, so no SIGHUP) when the connection drops, or `ringcp ... 2>&1
// | tee log` when tee is killed. The next progress line raised SIGPIPE,
// which killed the process at once (Go's default for writes to
// descriptors 1 and 2): no drain, no barrier, no cut-back, no word, and an
// existing DST at SRC's full size holding a partial copy. ringcp ignores
// SIGPIPE: the copy goes on, and stops cleanly when told to.
func TestStderrGoneMidCopy(t *testing.T) {
	src := slowSrc(t)
	dst := filepath.Join(t.TempDir(), "dst")
	randomFile(t, dst, 4<<20, 66)
	cmd := exec.Command(binary(t), "-q", "1", "-b", "4k", "--direct", "always", "--sparse", "never",
		"--progress", "always", src, dst)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	// Wait for the progress line to show bytes written, then hang up.
	var seen bytes.Buffer
	buf := make([]byte, 4096)
	deadline := time.Now().Add(30 * time.Second)
	for !progressMoved.Match(seen.Bytes()) {
		if time.Now().After(deadline) {
			t.Fatalf("no bytes written after 30 s:\n%s", seen.String())
		}
		n, err := pipe.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("ringcp ended before writing anything: %v\n%s", err, seen.String())
		}
	}
	pipe.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// ringcp ignores SIGPIPE: the copy goes on without its messages. It
	// must still be running a moment later (the copy takes a minute), and
	// a SIGTERM then stops it cleanly: DST cut to a true prefix.
	select {
	case err = <-done:
		t.Fatalf("ringcp ended (%v) right after its stderr went away", err)
	case <-time.After(2 * time.Second):
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("ringcp still running 60 s after SIGTERM")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted+int(syscall.SIGTERM) {
		t.Fatalf("after SIGTERM: %v, want exit %d", err, exitInterrupted+int(syscall.SIGTERM))
	}
	fi, serr := os.Stat(dst)
	if serr != nil {
		t.Fatal(serr)
	}
	if fi.Size() >= slowSrcSize {
		t.Fatalf("DST at SRC's full size (%d bytes) holding a partial copy: it looks complete", fi.Size())
	}
	if !bytes.Equal(readRange(t, dst, 0, fi.Size()), readRange(t, src, 0, fi.Size())) {
		t.Fatalf("DST's %d bytes are not SRC's prefix", fi.Size())
	}
}
