package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// SIGINT and SIGTERM stop a running copy: no new requests, the ones in
// flight finish, what was written is synced, the command says what it did
// and what DST holds, and exits 128+signal.

var writtenLine = regexp.MustCompile(`stopped submitting and waited for the I/O in flight; (\d+) bytes \([^)]*\) written, (synced to DST \(fdatasync\)|flushed to DST \(NBD FLUSH\))`)

// interrupted checks the interruption lines and returns the bytes written.
func interrupted(t *testing.T, r result, sig syscall.Signal, name string) int64 {
	t.Helper()
	r.want(t, 128+int(sig), "ringcp: interrupted by "+name+": ", "ringcp: interrupted ")
	m := writtenLine.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no \"... N bytes written, synced\" on stderr:\n%s", r.stderr)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	if n <= 0 {
		t.Errorf("%d bytes written: the signal came after the progress line showed some", n)
	}
	return n
}

// TestSignalExistingFile: SIGINT; an existing DST is cut to exactly the
// prefix the message states, and holds SRC's bytes.
func TestSignalExistingFile(t *testing.T) {
	src := slowSrc(t)
	dst := filepath.Join(t.TempDir(), "dst")
	randomFile(t, dst, 3<<20, 14)
	s := startSlow(t, src, dst)
	s.signal(t, syscall.SIGINT)
	r := s.wait(t)
	written := interrupted(t, r, syscall.SIGINT, "SIGINT")
	kept := keptBytes(t, r.stderr)
	if kept > written || kept == 0 {
		t.Errorf("DST keeps %d bytes of %d written", kept, written)
	}
	checkPrefix(t, dst, readRange(t, src, 0, kept), kept)
}

// TestSignalNewFile: SIGTERM; a new DST never appears.
func TestSignalNewFile(t *testing.T) {
	src := slowSrc(t)
	dst := filepath.Join(t.TempDir(), "dst")
	s := startSlow(t, src, dst)
	s.signal(t, syscall.SIGTERM)
	r := s.wait(t)
	interrupted(t, r, syscall.SIGTERM, "SIGTERM")
	r.want(t, 143, "DST "+dst+" discarded")
	mustNotExist(t, dst)
}

// TestSignalBlockDevice: SIGINT with a block device DST; its first bytes,
// as many as stated, are SRC's.
func TestSignalBlockDevice(t *testing.T) {
	src := slowSrc(t)
	dev := blocktest.Loop(t, blocktest.SparseFile(t, slowSrcSize))
	s := startSlow(t, src, dev)
	s.signal(t, syscall.SIGINT)
	r := s.wait(t)
	interrupted(t, r, syscall.SIGINT, "SIGINT")
	n := heldPrefix(t, r.stderr)
	if !bytes.Equal(readRange(t, dev, 0, n), readRange(t, src, 0, n)) {
		t.Errorf("the device's first %d bytes are not SRC's", n)
	}
}

// TestSourceShrinksDuringCopy: another process truncates SRC while ringcp
// copies it. ringcp must notice, exit 1 naming the read and its offset
// (at or past the new end), and leave no DST.
func TestSourceShrinksDuringCopy(t *testing.T) {
	const cut = 1 << 20
	src := slowSrc(t)
	dst := filepath.Join(t.TempDir(), "dst")
	s := startSlow(t, src, dst)
	if out, err := exec.Command("truncate", "-s", fmt.Sprint(cut), src).CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v\n%s", err, out)
	}
	r := s.wait(t)
	r.want(t, exitFailed, "source ended early", "DST "+dst+" discarded")
	op, path, off := failedAt(t, r.stderr)
	if op != "read" || path != src || off < cut {
		t.Errorf("error: %s %s at offset %d; want a read of %s at or past %d", op, path, off, src, cut)
	}
	mustNotExist(t, dst)
	if fi, err := os.Stat(src); err != nil || fi.Size() != cut {
		t.Fatalf("SRC: %v %v", fi, err)
	}
}

// heldPrefix reads N from the line an interrupted copy prints, "DST ...
// holds the first N bytes (...) of the copy from offset 0".
func heldPrefix(t *testing.T, stderr string) int64 {
	t.Helper()
	m := regexp.MustCompile(`DST \S+ holds the first (\d+) bytes \([^)]*\) of the copy from offset 0`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no \"DST ... holds the first N bytes\" line:\n%s", stderr)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// TestHangup: SIGHUP (the ssh session dropped) stops the copy like
// SIGTERM: drained, synced, what DST holds said, exit 129.
func TestHangup(t *testing.T) {
	defaultHangup(t)
	dst := filepath.Join(t.TempDir(), "dst")
	randomFile(t, dst, 4<<20, 65)
	s := startSlow(t, slowSrc(t), dst)
	s.signal(t, syscall.SIGHUP)
	r := s.wait(t)
	interrupted(t, r, syscall.SIGHUP, "SIGHUP")
}

// defaultHangup makes the copies this test starts begin with SIGHUP's
// default action, as from a terminal, even when go test itself was started
// with SIGHUP ignored (under nohup): an ignored signal stays ignored across
// exec, and ringcp rightly keeps it so; a handled one is reset to the
// default by exec.
func defaultHangup(t *testing.T) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	t.Cleanup(func() { signal.Stop(hup) })
}

// TestHangupIgnored: under nohup the copy goes on after SIGHUP, and a
// later SIGTERM still stops it: an ignored SIGHUP is not un-ignored.
func TestHangupIgnored(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("nohup (coreutils) is not installed")
	}
	dst := filepath.Join(t.TempDir(), "dst")
	s := startSlowWith(t, nohup, slowSrc(t), dst)
	s.signal(t, syscall.SIGHUP)
	select {
	case <-s.exited:
		t.Fatalf("ringcp under nohup stopped on SIGHUP:\n%s", s.output())
	case <-time.After(time.Second):
	}
	s.signal(t, syscall.SIGTERM)
	r := s.wait(t)
	if r.code != exitInterrupted+int(unix.SIGTERM) {
		t.Fatalf("exit %d after SIGTERM, want %d", r.code, exitInterrupted+int(unix.SIGTERM))
	}
}
