package webtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is a running web server the test started.
type Server struct {
	// URL is the server's root: http://127.0.0.1:PORT or https://...
	URL string
	// Addr is its host:port.
	Addr string
	// TLSDir holds ca-cert.pem (the CA that signed the server's
	// certificate), client-cert.pem and client-key.pem (what a server
	// asking for client certificates accepts); "" without TLS.
	TLSDir string

	cmd    *exec.Cmd
	output *bytes.Buffer
	exited chan struct{}
}

// CAFile is the path of the CA certificate a client must trust.
func (s *Server) CAFile() string { return filepath.Join(s.TLSDir, "ca-cert.pem") }

// ClientCert and ClientKey are a client certificate the server accepts.
func (s *Server) ClientCert() string { return filepath.Join(s.TLSDir, "client-cert.pem") }

// ClientKey is ClientCert's key.
func (s *Server) ClientKey() string { return filepath.Join(s.TLSDir, "client-key.pem") }

// Stop kills the server and waits for it to exit; the test's cleanup does
// it too. Any goroutine may call it, any number of times.
func (s *Server) Stop() {
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}

// Need returns the path of bin, or skips the test when it is not
// installed (pkg is the Debian package that has it).
func Need(t testing.TB, bin, pkg string) string {
	t.Helper()
	if path, err := exec.LookPath(bin); err == nil {
		return path
	}
	// Debian puts servers in sbin, which a user's PATH may lack.
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		p := filepath.Join(dir, bin)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	t.Skipf("%s not installed (Debian: %s)", bin, pkg)
	return ""
}

// launch starts the server argv(port) gives on a free loopback port and
// waits until it accepts connections. A port someone else took between
// our probe and the server's bind is retried with another.
func launch(t testing.TB, scheme string, argv func(port int) []string) *Server {
	t.Helper()
	var lastErr error
	for try := 0; try < 5; try++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		s, err := startOnce(argv(port), addr)
		if err != nil {
			lastErr = err
			continue
		}
		s.Addr, s.URL = addr, scheme+"://"+addr
		t.Cleanup(func() {
			s.Stop()
			if t.Failed() && s.output.Len() > 0 {
				t.Logf("%s output:\n%s", filepath.Base(s.cmd.Path), s.output.String())
			}
		})
		return s
	}
	t.Fatalf("web server did not start: %v", lastErr)
	return nil
}

// freePort is a loopback TCP port nobody listened on a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startOnce runs argv in a process group of its own and waits until addr
// accepts a connection, or the server dies.
func startOnce(argv []string, addr string) (*Server, error) {
	s := &Server{output: &bytes.Buffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = s.output, s.output
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	var waitErr error
	go func() {
		waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("%s exited: %v: %s", argv[0], waitErr, strings.TrimSpace(s.output.String()))
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return s, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("%s did not accept on %s within 10 s: %s", argv[0], addr, s.output.String())
}
