package e2e

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/nbd"
)

// TestSignalDuringPrepare: a stop signal while ringcp checks its ends (an
// NBD server that takes the connection and never greets: the handshake
// would wait out --nbd-timeout) stops it at once, as at any other phase:
// one line, the --json object, exit 128+signal, nothing written; SIGQUIT
// too, without a goroutine dump (issue 20: SIGINT and SIGTERM ended it
// with no line and no JSON, SIGQUIT dumped goroutines and exited 2).
func TestSignalDuringPrepare(t *testing.T) {
	dir := t.TempDir()
	uri := stalledServer(t, filepath.Join(dir, "stall.sock"))
	dst := filepath.Join(dir, "dst")
	list := filepath.Join(dir, "jobs")
	if err := os.WriteFile(list, []byte("'"+uri+"' "+dst+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT} {
		for _, args := range [][]string{{"--json", uri, dst}, {"--jobs", list}} {
			cmd := exec.Command(binary(t), append([]string{"--nbd-timeout", "60s"}, args...)...)
			r := signalAfter(t, cmd, 500*time.Millisecond, sig) // in the handshake by then
			name := args[0] + "/" + sig.String()
			if r.code != exitInterrupted+int(sig) {
				t.Errorf("%s: exit %d, want %d", name, r.code, exitInterrupted+int(sig))
			}
			if !strings.Contains(r.stderr, "stopped while checking SRC and DST; nothing was written") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("%s: stderr should say what stopped, and only that:\n%s", name, r.stderr)
			}
			if args[0] == "--json" {
				var rep jsonReport
				if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Outcome != "interrupted" || rep.ExitCode != exitInterrupted+int(sig) {
					t.Errorf("%s: --json %q: %v; want outcome interrupted", name, r.stdout, err)
				}
			}
			mustNotExist(t, dst)
		}
	}
}

// TestDDSignalDuringPrepare: ringcp dd stops as the plain command does
// on a stop signal while it resolves its operands and checks its ends
// (it opens SRC to learn its size, and decodes a compressed SRC up to
// the range's end): one line, exit 128+signal, nothing written. Its plan
// ran before it took the signals: SIGTERM ended it with no line, SIGQUIT
// dumped goroutines and exited 2 ("refused").
func TestDDSignalDuringPrepare(t *testing.T) {
	dir := t.TempDir()
	uri := stalledServer(t, filepath.Join(dir, "stall.sock"))
	dst := filepath.Join(dir, "dst")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGQUIT} {
		cmd := exec.Command(binary(t), "dd", "if="+uri, "of="+dst, "bs=1M", "count=1")
		r := signalAfter(t, cmd, 500*time.Millisecond, sig) // in the handshake by then
		if r.code != exitInterrupted+int(sig) {
			t.Errorf("%s: exit %d, want %d", sig, r.code, exitInterrupted+int(sig))
		}
		if !strings.Contains(r.stderr, "stopped while checking SRC and DST; nothing was written") || strings.Contains(r.stderr, "goroutine ") {
			t.Errorf("%s: stderr should say what stopped, and only that:\n%.600s", sig, r.stderr)
		}
		mustNotExist(t, dst)
	}
}

// stalledServer listens on a Unix socket at sock, takes every connection
// and says nothing, until the test ends; it returns the URI.
func stalledServer(t *testing.T, sock string) string {
	t.Helper()
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return nbd.UnixURI("", sock)
}
