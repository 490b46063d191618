package syncproto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SSH says how to reach another host: the system's ssh client, with the
// user's own configuration and keys (~/.ssh/config, the agent), never a
// password prompt (BatchMode: there is no terminal on its pipes).
type SSH struct {
	// Command is the ssh client ("ssh" when "").
	Command string
	// Options are more ssh options, placed before the destination: -F
	// FILE, -i KEY, -o Name=Value. ssh keeps the first value it reads
	// of an option, so those Dial sets (BatchMode) stay.
	Options []string
	// RemoteRingcp is the ringcp binary on the other host ("ringcp":
	// found in its PATH).
	RemoteRingcp string
	// ServeArgs follow --serve on the remote command line (ServeMain's:
	// --max-rate=N).
	ServeArgs []string
}

// Args is the ssh command line that runs `ringcp sync --serve` on r's
// host. The path does not appear on it (it goes in the hello frame, so
// no remote shell ever parses it); the remote ringcp is quoted for that
// shell.
func (s SSH) Args(r Remote) []string {
	cmd := s.Command
	if cmd == "" {
		cmd = "ssh"
	}
	ringcp := s.RemoteRingcp
	if ringcp == "" {
		ringcp = "ringcp"
	}
	// -T: no terminal (the stream is binary); -x, -a: no X11 or agent
	// forwarding; -e none: no escape character in the stream.
	args := []string{cmd, "-o", "BatchMode=yes", "-T", "-x", "-a", "-e", "none"}
	if r.Port != "" {
		args = append(args, "-p", r.Port)
	}
	if r.User != "" {
		args = append(args, "-l", r.User)
	}
	args = append(args, s.Options...)
	args = append(args, "--", r.Host, shellQuote(ringcp), "sync", "--serve")
	for _, a := range s.ServeArgs {
		args = append(args, shellQuote(a))
	}
	return args
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./=+:@-]+$`)

// shellQuote quotes s for the remote user's shell.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Conn is a session's transport: the stdin and stdout of an ssh process
// running ringcp sync --serve on the other host.
type Conn struct {
	name   string
	cmd    *exec.Cmd
	w      *os.File // ssh's stdin
	r      *os.File // ssh's stdout
	stderr *tail
	exited chan struct{} // closed once ssh exited
	err    error         // Wait's, once exited is closed
	once   sync.Once
}

// Dial starts ssh to r's host. It returns at once; whether the remote
// ringcp runs shows at the handshake (Push or Pull), whose error then
// says why ssh ended (its exit status and last words on stderr).
func Dial(ctx context.Context, r Remote, s SSH) (*Conn, error) {
	args := s.Args(r)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = sshAttr()
	// exec copies ssh's stderr through a pipe, and Wait waits for every
	// holder of that pipe to close it: a ProxyCommand ssh started holds
	// it, and outlived a stopped ssh by minutes. Once ssh exited, its
	// last words have come within this delay.
	cmd.WaitDelay = 2 * time.Second
	c := &Conn{name: r.Name(), cmd: cmd, stderr: &tail{}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	// Pipes of our own, not StdinPipe and StdoutPipe: Wait closes those
	// as soon as ssh exits, and a Read that came after it (ssh refused
	// the login and exited before the handshake read its stdout) failed
	// with "read |0: file already closed" instead of reading EOF and
	// saying why ssh ended. Ours stay open until Close.
	stdin, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	rd, stdout, err := os.Pipe()
	if err != nil {
		stdin.Close()
		w.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = stdin, stdout
	err = cmd.Start()
	stdin.Close() // ssh's ends: its copies are its own now
	stdout.Close()
	if err != nil {
		w.Close()
		rd.Close()
		return nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	c.w, c.r = w, rd
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// Name names the other end: [user@]host:path.
func (c *Conn) Name() string { return c.name }

// Read reads the remote ringcp's stdout. When it ends because ssh
// failed, the error says how.
func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		if serr := c.failure(2 * time.Second); serr != nil {
			return n, serr
		}
	}
	return n, err
}

// Write writes to the remote ringcp's stdin.
func (c *Conn) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		if serr := c.failure(2 * time.Second); serr != nil {
			return n, serr
		}
	}
	return n, err
}

// Close ends the session: stdin closed (the remote ringcp reads EOF and
// exits, claiming nothing), then ssh is given a few seconds to exit, then
// SIGTERM, then SIGKILL, each to ssh's process group (ssh leads a session
// of its own): what it started, a ProxyCommand still connecting, ends
// with it.
func (c *Conn) Close() error {
	c.once.Do(func() {
		c.w.Close()
		select {
		case <-c.exited:
		case <-time.After(5 * time.Second):
			c.signalGroup(syscall.SIGTERM)
			select {
			case <-c.exited:
			case <-time.After(2 * time.Second):
				c.signalGroup(syscall.SIGKILL)
				<-c.exited
			}
		}
		// Last, so that a read still waiting ends even when a process
		// ssh started (a ProxyCommand) still holds its stdout.
		c.r.Close()
	})
	return nil
}

// SSHError is ssh ending with a failure before the session did: it could
// not connect or authenticate (status 255), or the remote command failed
// to start (127: no ringcp there).
type SSHError struct {
	Host   string
	Status int
	Stderr string
}

func (e *SSHError) Error() string {
	s := fmt.Sprintf("ssh %s: exit status %d", e.Host, e.Status)
	if e.Stderr != "" {
		s += ": " + e.Stderr
	}
	switch e.Status {
	case 127, 126:
		s += " (is ringcp installed on that host? --remote-ringcp names it)"
	case 255:
		s += " (ssh could not connect or log in; it runs with BatchMode=yes: keys or an agent, no password prompt)"
	}
	return s
}

// failure waits up to wait for ssh to exit and returns an *SSHError
// when it failed; nil when it is still running or exited well.
func (c *Conn) failure(wait time.Duration) error {
	select {
	case <-c.exited:
	case <-time.After(wait):
		return nil
	}
	var ee *exec.ExitError
	if !errors.As(c.err, &ee) || ee.ExitCode() == 0 {
		return nil
	}
	return &SSHError{Host: c.name, Status: ee.ExitCode(), Stderr: c.stderr.String()}
}

// tail keeps the last 4 KiB written to it: ssh's stderr, for errors.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-4096:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
