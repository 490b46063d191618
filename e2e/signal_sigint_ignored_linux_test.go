package e2e

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestInterruptIgnoredInBackground: a command a script starts in the
// background (sh without job control) begins with SIGINT and SIGQUIT
// ignored; ringcp keeps SIGINT so, as it keeps nohup's SIGHUP: Ctrl-C in
// the script's terminal does not stop the copy, SIGTERM does. The wrapper
// ignores them and execs ringcp, as such a shell does for `ringcp ... &`.
// SIGQUIT is not kept ignored: Go's runtime respects an inherited SIG_IGN
// for SIGHUP and SIGINT only, and installs its own handler for SIGQUIT
// before ringcp runs, so that it stops the copy as a signal does.
func TestInterruptIgnoredInBackground(t *testing.T) {
	wrapper := filepath.Join(t.TempDir(), "background")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\ntrap '' INT QUIT\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	s := startSlowWith(t, wrapper, slowSrc(t), dst)
	s.signal(t, syscall.SIGINT)
	select {
	case <-s.exited:
		t.Fatalf("ringcp started with SIGINT ignored stopped on it:\n%s", s.output())
	case <-time.After(time.Second):
	}
	s.signal(t, syscall.SIGTERM)
	if r := s.wait(t); r.code != exitInterrupted+int(unix.SIGTERM) {
		t.Fatalf("exit %d after SIGTERM, want %d", r.code, exitInterrupted+int(unix.SIGTERM))
	}
}
