package e2e

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/nbdtest"
)

// nbdkit started with -p PORT (no socket activation) listens with two
// sockets, an IPv4 one and an IPv6 one with IPV6_V6ONLY, as most servers
// that bind "every address" through getaddrinfo do. The same-export check
// named a local server by its listening socket, so nbd://127.0.0.1:P/ and
// nbd://[::1]:P/ looked like two servers: a copy within one export, its
// ranges overlapping, overwrote SRC while reading it and exited 0 (issue
// 20's second review; issue 20 item 8 tested a single dual-stack socket).

// nbdkitOnPort starts nbdkit -p on a free port of every address, serving
// a memory disk of size bytes, and returns the port once it answers.
func nbdkitOnPort(t *testing.T, size int64) string {
	t.Helper()
	nbdtest.Need(t, "nbdkit")
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command("nbdkit", "-f", "-p", port, "memory", strconv.FormatInt(size, 10))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	for _, host := range []string{"127.0.0.1", "::1"} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.Dial("tcp", net.JoinHostPort(host, port))
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("nbdkit -p %s does not answer on %s: %v", port, host, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return port
}

// TestNBDSameExportTwoSockets: SRC nbd://127.0.0.1:P/, DST nbd://[::1]:P/
// of one nbdkit -p, ranges overlapping: refused, nothing written; ranges
// apart are copied.
func TestNBDSameExportTwoSockets(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp6"); err != nil {
		t.Skipf("no IPv6: %v", err)
	}
	port := nbdkitOnPort(t, 2<<20)
	a, b := "nbd://127.0.0.1:"+port+"/", "nbd://[::1]:"+port+"/"
	old := enginetest.RandomBytes(2<<20, 9)
	fillExport(t, a, old)
	cli(t, "--src-offset", "0", "--dst-offset", "524288", "--length", "1048576", a, b).want(t, exitRefused, "same NBD export")
	sameBytes(t, "the export after a refusal", exportBytes(t, a), old)
	cli(t, "--src-offset", "0", "--dst-offset", "1048576", "--length", "1048576", a, b).want(t, exitOK)
	sameBytes(t, "a copy between ranges apart", exportBytes(t, a)[1<<20:], old[:1<<20])
}
