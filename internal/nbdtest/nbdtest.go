// Package nbdtest starts real NBD servers (qemu-nbd, nbdkit,
// qemu-storage-daemon) for tests outside package nbd, and stops them when
// the test ends. Each server gets a listening socket the test made itself
// as fd 3 (socket activation with LISTEN_FDS=1 for qemu-nbd and nbdkit;
// addr.type=fd for qemu-storage-daemon): no port races, no waiting for a
// socket file to appear. Each runs in its own process group, killed at
// the test's end. A missing server binary skips the test with the reason
// (CI installs them: .ci/run).
package nbdtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Transport is how a test reaches its server.
type Transport string

// Transports: a Unix socket in the test's temporary folder, or TCP on
// loopback at a port the kernel chose.
const (
	Unix Transport = "unix"
	TCP  Transport = "tcp"
	// TCPAny listens on every address of this host (IPv4 and IPv6, the
	// whole of 127.0.0.0/8), as a server started without an address
	// does; its URI names 127.0.0.1.
	TCPAny Transport = "tcp-any"
)

// Transports are both, for tests that run over each.
var Transports = []Transport{Unix, TCP}

// Need skips the test unless every binary is installed.
func Need(t testing.TB, bins ...string) {
	t.Helper()
	for _, b := range bins {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed (Debian: qemu-utils, nbdkit, libnbd-bin, qemu-system-common): %v", b, err)
		}
	}
}

// Server is a running server the test started.
type Server struct {
	URI  string
	cmd  *exec.Cmd
	once sync.Once
}

// Stop kills the server's process group and waits for it; the test's
// cleanup does it too. It may be called from any goroutine (a timer that
// kills the server mid-copy); later calls wait for the first.
func (s *Server) Stop() {
	s.once.Do(func() {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		s.cmd.Wait()
	})
}

// Pid is the server's process id (for SIGSTOP in tests of a server that
// stops answering).
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Start runs argv with the socket as fd 3 and returns the server; its URI
// names export. The shell sets LISTEN_PID to its own pid, which exec
// keeps for the server.
func Start(t testing.TB, tr Transport, export string, argv ...string) *Server {
	t.Helper()
	sock := ""
	if tr == Unix {
		sock = filepath.Join(t.TempDir(), "nbd.sock")
	}
	return start(t, tr, sock, export, argv)
}

// StartAt is Start on a Unix socket at the path sock (which must not
// exist), for a test that restarts a server where a client expects it.
func StartAt(t testing.TB, sock, export string, argv ...string) *Server {
	t.Helper()
	return start(t, Unix, sock, export, argv)
}

func start(t testing.TB, tr Transport, sock, export string, argv []string) *Server {
	t.Helper()
	Need(t, argv[0])
	f, uri := listen(t, tr, sock, export)
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
	s := &Server{URI: uri, cmd: cmd}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("%s stderr:\n%s", argv[0], stderr.String())
		}
	})
	return s
}

// listen makes the socket a server will inherit, and the URI naming it:
// a Unix socket at sock, TCP on loopback, or TCP on every address.
func listen(t testing.TB, tr Transport, sock, export string) (*os.File, string) {
	t.Helper()
	var ln net.Listener
	var err error
	switch tr {
	case TCP:
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	case TCPAny:
		ln, err = net.Listen("tcp", ":0")
	default:
		ln, err = net.Listen("unix", sock)
		if err == nil {
			// Our copy closes below; the server's keeps the file.
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
		}
		t.Cleanup(func() { os.Remove(sock) })
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
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		return f, fmt.Sprintf("nbd://127.0.0.1:%d/%s", tcp.Port, escape(export))
	}
	return f, "nbd+unix:///" + escape(export) + "?socket=" + escape(ln.Addr().String())
}

// escape percent-encodes every byte of a URI part but letters, digits,
// "-._~" and "/", as nbd.UnixURI does (package nbd's own tests use this
// kit, so it cannot import nbd): a "+" or a space in a socket's folder
// reaches the server's socket only when written %2B and %20.
func escape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c == '/' || c == '-' || c == '.' || c == '_' || c == '~' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// QemuNBD serves image in format (raw, qcow2...) with qemu-nbd as export
// "disk", for up to 8 clients at once, until the test ends; extra goes
// before the image (-r for read-only, --cache=none...).
func QemuNBD(t testing.TB, tr Transport, format, image string, extra ...string) *Server {
	args := append([]string{"qemu-nbd", "--persistent", "--shared=8", "-f", format, "-x", "disk"}, extra...)
	return Start(t, tr, "disk", append(args, image)...)
}

// Nbdkit serves a plugin, with its filters and parameters in args
// ("--filter=delay", "memory", "1M", "delay-read=1ms"), in the foreground
// until the test ends. Its default export is "".
func Nbdkit(t testing.TB, tr Transport, args ...string) *Server {
	return Start(t, tr, "", append([]string{"nbdkit", "-f"}, args...)...)
}

// QemuStorageDaemon serves image in format with qemu-storage-daemon as
// export "disk", read-only unless writable, until the test ends. The
// daemon has no LISTEN_FDS; it takes the socket as fd 3 through
// addr.type=fd.
func QemuStorageDaemon(t testing.TB, tr Transport, format, image string, writable bool) *Server {
	ro, rw := "on", "off"
	if writable {
		ro, rw = "off", "on"
	}
	return Start(t, tr, "disk", "qemu-storage-daemon",
		"--blockdev", "driver=file,node-name=file0,read-only="+ro+",filename="+image,
		"--blockdev", "driver="+format+",node-name=disk0,read-only="+ro+",file=file0",
		"--nbd-server", "addr.type=fd,addr.str=3",
		"--export", "type=nbd,id=export0,node-name=disk0,name=disk,writable="+rw)
}

// QemuImg runs qemu-img and fails the test if it fails.
func QemuImg(t testing.TB, args ...string) {
	t.Helper()
	Need(t, "qemu-img")
	if out, err := exec.Command("qemu-img", args...).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
