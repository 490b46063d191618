package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A stop signal ends a copy from a standard input that ringcp cannot
// open again through /proc/self/fd as a descriptor of its own that Go's
// poller waits on: a socket (ENXIO), a pipe of another user's (EACCES).
// Before, the read waited in a blocking read(2) that nothing ended, and
// the stopped copy with it, until the writer wrote or closed.

// silentChunk is what the writer gives before it falls silent (its end
// kept open): enough for progress to show bytes written.
var silentChunk = bytes.Repeat([]byte("ringcp stdin\x00\x00\x00\x00"), 1<<20/16)

// stopSilentStdin starts cmd (ringcp copying "-"), waits until it wrote,
// sends SIGTERM and wants 143 within stopLimit, and no DST left.
func stopSilentStdin(t *testing.T, cmd *exec.Cmd, dst string) {
	t.Helper()
	p := startCmd(t, cmd, nil)
	p.waitFor(t, progressMoved)
	p.signal(t, syscall.SIGTERM)
	res := p.waitUpTo(t, stopLimit)
	res.want(t, 128+int(syscall.SIGTERM), "interrupted by SIGTERM")
	mustNotExist(t, dst)
}

// TestStopWhileSocketStdinIsSilent: standard input is one end of a
// socketpair whose other end (the test's) gives 1 MiB, then nothing.
func TestStopWhileSocketStdinIsSilent(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	defer ours.Close()
	go ours.Write(silentChunk)
	dst := filepath.Join(t.TempDir(), "dst")
	cmd := exec.Command(binary(t), "-b", "64k", "--progress", "always", "-", dst)
	cmd.Stdin = theirs
	defer theirs.Close()
	stopSilentStdin(t, cmd, dst)
}

// TestStopWhileOtherUsersPipeIsSilent: ringcp runs as nobody, its
// standard input a pipe the test (root) made, which nobody may not open
// again; the test writes 1 MiB, then nothing.
func TestStopWhileOtherUsersPipeIsSilent(t *testing.T) {
	nobody := makeUser(t, "nobody")
	tree := makeSharedTree(t, nobody)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	go w.Write(silentChunk)
	dst := filepath.Join(tree.victim, "dst")
	cmd := nobody.command(nil, tree.bin, "-b", "64k", "--progress", "always", "-", dst)
	cmd.Stdin = r
	defer r.Close()
	stopSilentStdin(t, cmd, dst)
}
