package syncproto

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An ssh that fails at once (a key not authorized: status 255) is named
// as such by the read that follows, however late that read comes: once
// ssh exited, the read used to fail with "read |0: file already closed"
// (exec.Cmd.Wait closed the pipe), which TestSSHFailures met as a flake.
// Here the read comes after the exit, every time.
func TestConnReadAfterSSHExited(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "ssh")
	script := "#!/bin/sh\necho 'root@host: Permission denied (publickey).' >&2\nexit 255\n"
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
	defer c.Close()
	<-c.exited
	n, err := c.Read(make([]byte, 16))
	var se *SSHError
	if n != 0 || !errors.As(err, &se) || se.Status != 255 || !strings.Contains(err.Error(), "Permission denied") {
		t.Fatalf("read %d bytes, %v; want an *SSHError of status 255 naming ssh's words", n, err)
	}
	if _, err := c.Write([]byte("hello")); !errors.As(err, &se) {
		t.Fatalf("write after ssh exited: %v, want its *SSHError", err)
	}
}
