package e2e

import (
	"bytes"
	"os"
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
	p := startSlow(t, src, dst) // returns once the progress line shows bytes written
	p.hangUp()
	// ringcp ignores SIGPIPE: the copy goes on without its messages. It
	// must still be running a moment later (the copy takes a minute), and
	// a SIGTERM then stops it cleanly: DST cut to a true prefix.
	select {
	case <-p.exited:
		t.Fatalf("ringcp ended (%v) right after its stderr went away", p.err)
	case <-time.After(2 * time.Second):
	}
	p.signal(t, syscall.SIGTERM)
	if r := p.wait(t); r.code != exitInterrupted+int(syscall.SIGTERM) {
		t.Fatalf("after SIGTERM: exit %d, want %d", r.code, exitInterrupted+int(syscall.SIGTERM))
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
