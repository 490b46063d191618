// Package sshtest runs a real OpenSSH server for tests of ringcp across
// hosts: sshd from Debian's openssh-server, started by the test on a
// port of its own, with its own configuration, host key and
// authorized_keys in the test's temporary folder, and a client
// configuration (ssh -F) that reads nothing of the machine's or the
// user's ssh setup. The server logs in root with a key the test made;
// it is stopped when the test ends. It needs root and the openssh-server
// and openssh-client packages, and skips the test without them.
//
// sshd needs its privilege separation folder, /run/sshd, which Debian's
// ssh service makes at start: a test makes it when it is missing and
// removes it afterwards when no sshd is left running.
package sshtest

import (
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

// Server is a running sshd.
type Server struct {
	Host    string   // the client configuration's name for it: "synctest"
	Options []string // ssh options that reach it: -F CONFIG
	Port    int
	Dir     string // where its files are
	cmd     *exec.Cmd
}

// Start starts sshd and returns once it accepts connections.
func Start(t testing.TB) *Server {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("sshtest needs root: sshd logs in root with the test's key")
	}
	for _, bin := range []string{"/usr/sbin/sshd", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (Debian: openssh-server, openssh-client): %v", bin, err)
		}
	}
	dir := t.TempDir()
	s := &Server{Host: "synctest", Dir: dir}
	keygen(t, filepath.Join(dir, "host_key"))
	keygen(t, filepath.Join(dir, "id"))
	copyFile(t, filepath.Join(dir, "id.pub"), filepath.Join(dir, "authorized_keys"))
	s.Port = freePort(t)
	s.writeConfigs(t)
	privsepDir(t)
	s.cmd = exec.Command("/usr/sbin/sshd", "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	log, err := os.Create(filepath.Join(dir, "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	t.Cleanup(func() {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		s.cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("sshd log:\n%s", b)
		}
	})
	s.waitListening(t)
	s.Options = []string{"-F", filepath.Join(dir, "ssh_config")}
	return s
}

// URL is the ssh:// URL of path on the server.
func (s *Server) URL(path string) string { return "ssh://" + s.Host + path }

// writeConfigs writes sshd's configuration and the client's.
func (s *Server) writeConfigs(t testing.TB) {
	d := s.Dir
	sshd := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s/host_key
PidFile none
AuthorizedKeysFile %s/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
LogLevel ERROR
`, s.Port, d, d)
	hostKey, err := os.ReadFile(filepath.Join(d, "host_key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	known := fmt.Sprintf("[127.0.0.1]:%d %s", s.Port, hostKey)
	client := fmt.Sprintf(`Host %s
  HostName 127.0.0.1
  Port %d
  User root
  IdentityFile %s/id
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile %s/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  UpdateHostKeys no
  LogLevel ERROR
`, s.Host, s.Port, d, d)
	for name, body := range map[string]string{"sshd_config": sshd, "ssh_config": client, "known_hosts": known} {
		if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// waitListening waits until sshd accepts connections, or fails the test
// with its log.
func (s *Server) waitListening(t testing.TB) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
		if err == nil {
			c.Close()
			return
		}
	}
	b, _ := os.ReadFile(filepath.Join(s.Dir, "sshd.log"))
	t.Fatalf("sshd did not listen on port %d within 10s:\n%s", s.Port, b)
}

func keygen(t testing.TB, path string) {
	t.Helper()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ringcp-test", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// freePort is a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// privsepDir makes /run/sshd when it is missing, and removes it when the
// test ends if it made it and no sshd is running any more (another
// test's may be).
func privsepDir(t testing.TB) {
	t.Helper()
	const dir = "/run/sshd"
	if err := os.Mkdir(dir, 0o755); err != nil {
		if os.IsExist(err) {
			return
		}
		t.Fatalf("sshd needs %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if !sshdRunning() {
			os.Remove(dir)
		}
	})
}

// sshdRunning says whether any process is an sshd.
func sshdRunning() bool {
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		if b, err := os.ReadFile(c); err == nil && strings.TrimSpace(string(b)) == "sshd" {
			return true
		}
	}
	return false
}
