package syncproto

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Closing a session whose ssh is still logging in ends it, and what ssh
// started with it (a ProxyCommand, which holds ssh's stdout and stderr),
// promptly. Close used to wait for the proxy to end by itself: ssh's
// stderr was copied by exec's goroutine, which Wait waits for until
// every holder of the pipe closed it; `ringcp sync` stopped by SIGTERM
// during a login through "ProxyCommand sleep 300" exited 299 s later.
func TestConnCloseDuringLogin(t *testing.T) {
	d := t.TempDir()
	fake, proxyPid := filepath.Join(d, "ssh"), filepath.Join(d, "proxy.pid")
	// The fake ssh starts its "proxy" and waits for it, like an ssh
	// whose ProxyCommand has not connected yet.
	script := "#!/bin/sh\nsleep 120 &\necho $! > '" + proxyPid + "'\nwait\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := ParseRemote("ssh://host/disk")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(context.Background(), r, SSH{Command: fake})
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for start := time.Now(); pid == 0 && time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(proxyPid)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		t.Fatal("the fake ssh did not start its proxy")
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatal("Close still waits 60 s later, for the proxy ssh started")
	}
	for start := time.Now(); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the proxy ssh started (pid %d) still runs after Close", pid)
		}
	}
}
