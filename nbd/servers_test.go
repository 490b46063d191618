package nbd

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Real servers for the tests. Each is started with a listening socket the
// test made itself and hands over by socket activation (LISTEN_FDS=1,
// the socket as fd 3; both qemu-nbd and nbdkit support it): no port
// races, no waiting for a socket file to appear. Each runs in its own
// process group, killed at the test's end.

// transport is how a test reaches its server.
type transport string

const (
	overUnix transport = "unix"
	overTCP  transport = "tcp"
)

var transports = []transport{overUnix, overTCP}

// needBin skips the test when a server binary is missing (CI has them:
// .ci/run installs qemu-utils and nbdkit).
func needBin(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed (Debian: qemu-utils, nbdkit): %v", name, err)
	}
}

// listen makes the socket a server will inherit, and the URI naming it.
func listen(t *testing.T, tr transport, export string) (*os.File, string) {
	t.Helper()
	var ln net.Listener
	var err error
	if tr == overUnix {
		sock := filepath.Join(t.TempDir(), "nbd.sock")
		ln, err = net.Listen("unix", sock)
		if err == nil {
			// Our copy closes below; the server's keeps the file.
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
		}
		t.Cleanup(func() { os.Remove(sock) })
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // f is a dup that keeps listening
	t.Cleanup(func() { f.Close() })
	exp := url.PathEscape(export)
	if tr == overUnix {
		return f, fmt.Sprintf("nbd+unix:///%s?socket=%s", exp, url.QueryEscape(ln.Addr().String()))
	}
	return f, fmt.Sprintf("nbd://%s/%s", ln.Addr().String(), exp)
}

// serve starts argv with the socket as fd 3 and returns the URI. The
// shell sets LISTEN_PID to its own pid, which exec keeps for the server.
func serve(t *testing.T, tr transport, export string, argv ...string) string {
	t.Helper()
	needBin(t, argv[0])
	f, uri := listen(t, tr, export)
	var stderr bytes.Buffer
	cmd := exec.Command("sh", append([]string{"-c", `LISTEN_PID=$$ LISTEN_FDS=1 exec "$@"`, "sh"}, argv...)...)
	cmd.ExtraFiles = []*os.File{f}
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Only the server holds the socket now: if it dies, clients get
	// ECONNREFUSED at once instead of waiting in the backlog.
	f.Close()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("%s stderr:\n%s", argv[0], stderr.String())
		}
	})
	return uri
}

// qemuNBD serves an image with qemu-nbd: persistent, for up to 8 clients.
func qemuNBD(t *testing.T, tr transport, format, image string, extra ...string) string {
	args := append([]string{"qemu-nbd", "--persistent", "--shared=8", "-f", format, "-x", "disk"}, extra...)
	return serve(t, tr, "disk", append(args, image)...)
}

// nbdkit serves a plugin (with filters) in the foreground.
func nbdkit(t *testing.T, tr transport, args ...string) string {
	return serve(t, tr, "", append([]string{"nbdkit", "-f"}, args...)...)
}

// qemuImg runs qemu-img.
func qemuImg(t *testing.T, args ...string) {
	t.Helper()
	needBin(t, "qemu-img")
	if out, err := exec.Command("qemu-img", args...).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// dial connects with short timeouts and closes at the test's end.
func dial(t *testing.T, uri string, opt Options) *Client {
	t.Helper()
	if opt.Timeout == 0 {
		opt.Timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, uri, opt)
	if err != nil {
		t.Fatalf("dial %s: %v", uri, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
