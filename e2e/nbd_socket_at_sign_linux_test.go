package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/nbdtest"
)

// An NBD URI's socket= is a file system path, as libnbd reads it: a path
// that starts with "@" is a file named "@..." in the working folder. Go's
// net package reads a leading "@" as an abstract socket, a namespace of
// its own: nbd+unix:///?socket=@disk.sock reached whatever server listens
// on the abstract name "disk.sock", and the copy wrote that server's
// export, exit 0, while nbdinfo, qemu-img and nbdcopy given the same URI
// read the file socket's (issue 20's second review). An abstract socket
// is written %00 in a URI, as libnbd's tests spell it.

// proxyAbstract listens on the abstract socket name (Go's "@name") and
// forwards every connection to the Unix socket at target, until the test
// ends.
func proxyAbstract(t *testing.T, name, target string) {
	t.Helper()
	ln, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("unix", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
}

// TestNBDSocketAtSign: the socket "@NAME.sock" in the working folder
// serves export A; an abstract socket of the same name forwards to
// another server's export B. ringcp SRC nbd+unix:///?socket=@NAME.sock
// must write A, as libnbd reads the URI, and leave B as it was.
func TestNBDSocketAtSign(t *testing.T) {
	nbdtest.Need(t, "nbdkit", "nbdinfo")
	dir := t.TempDir()
	src, a, b := filepath.Join(dir, "src.img"), filepath.Join(dir, "a.img"), filepath.Join(dir, "b.img")
	data := randomFile(t, src, 1<<20+4097, 71)
	for _, img := range []string{a, b} {
		if err := os.WriteFile(img, make([]byte, len(data)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	name := fmt.Sprintf("ringcp-attack-%d-%d.sock", os.Getpid(), time.Now().UnixNano())
	nbdtest.StartAt(t, filepath.Join(dir, "@"+name), "", "nbdkit", "-f", "file", a)
	other := filepath.Join(dir, "other.sock")
	nbdtest.StartAt(t, other, "", "nbdkit", "-f", "file", b)
	proxyAbstract(t, name, other)
	uri := "nbd+unix:///?socket=@" + name

	// What libnbd reads the URI as: A's server, in the working folder.
	info := exec.Command("nbdinfo", "--size", uri)
	info.Dir = dir
	if out, err := info.CombinedOutput(); err != nil {
		t.Fatalf("nbdinfo %s in %s: %v\n%s", uri, dir, err, out)
	}

	cmd := exec.Command(binary(t), src, uri)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("ringcp %s %s (in %s): %v\n%s", src, uri, dir, err, out)
	got, _ := os.ReadFile(b)
	sameBytes(t, "export B (the abstract socket's, not the URI's)", got, make([]byte, len(data)))
	if err == nil {
		got, _ = os.ReadFile(a)
		sameBytes(t, "export A (the URI's socket)", got, data)
	}
}
