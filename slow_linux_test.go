package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A copy that takes seconds, run by the real binary, for what needs a real
// process: signals, and a SRC truncated by another process mid-copy.

// slowSrcSize: 16 MiB of random data, then a hole up to 1 GiB. At one
// 4 KiB O_DIRECT request at a time (16 MB/s here) the copy takes a minute,
// so the tests act on it while it runs, whatever the machine. It runs with
// --sparse never: otherwise the hole is skipped, the copy is over in about
// a second, and a signal can arrive after it finished.
const slowSrcSize, slowDataSize = 1 << 30, 16 << 20

func slowSrc(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src")
	randomFile(t, path, slowDataSize, 13)
	if err := os.Truncate(path, slowSrcSize); err != nil {
		t.Fatal(err)
	}
	return path
}

// slowCopy is a running ringcp process.
type slowCopy struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	moving chan struct{} // closed once progress shows bytes written
	exited chan struct{} // closed after Wait
	err    error         // from Wait
}

// progressMoved: a progress line that shows more than "0 B" written.
var progressMoved = regexp.MustCompile(`\r\x1b\[Kcopying +[1-9][0-9.]* [KMG]?i?B / `)

// startSlow starts ringcp with one 4 KiB O_DIRECT request at a time, every
// byte read, and a progress line, and returns once that line shows bytes written.
func startSlow(t *testing.T, args ...string) *slowCopy {
	t.Helper()
	return startSlowWith(t, "", args...)
}

// startSlowWith is startSlow run through a wrapper command (nohup), or
// directly when wrapper is "".
func startSlowWith(t *testing.T, wrapper string, args ...string) *slowCopy {
	t.Helper()
	return startSlowDepth(t, wrapper, 1, args...)
}

// startSlowDepth is startSlowWith with depth 4 KiB requests in flight.
func startSlowDepth(t *testing.T, wrapper string, depth int, args ...string) *slowCopy {
	t.Helper()
	flags := []string{"-q", strconv.Itoa(depth), "-b", "4k", "--direct", "always", "--sparse", "never", "--progress", "always"}
	argv := append([]string{binary(t)}, append(flags, args...)...)
	if wrapper != "" {
		argv = append([]string{wrapper}, argv...)
	}
	return startArgv(t, argv)
}

// startArgv starts argv (ringcp with --progress always, maybe under a
// wrapper) and returns once its progress line shows bytes written.
func startArgv(t *testing.T, argv []string) *slowCopy {
	t.Helper()
	s := &slowCopy{cmd: exec.Command(argv[0], argv[1:]...),
		moving: make(chan struct{}), exited: make(chan struct{})}
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.exited
	})
	go s.read(pipe)
	select {
	case <-s.moving:
		return s
	case <-s.exited:
		t.Fatalf("ringcp exited before writing anything: %v\n%s", s.err, s.output())
	case <-time.After(30 * time.Second):
		t.Fatalf("no bytes written after 30 s:\n%s", s.output())
	}
	return nil
}

// read collects stderr, then waits for the process: all reads from the
// pipe must be done before Wait.
func (s *slowCopy) read(pipe io.Reader) {
	buf := make([]byte, 4096)
	moved := false
	for {
		n, err := pipe.Read(buf)
		s.mu.Lock()
		s.stderr.Write(buf[:n])
		if !moved && progressMoved.Match(s.stderr.Bytes()) {
			moved = true
			close(s.moving)
		}
		s.mu.Unlock()
		if err != nil {
			break
		}
	}
	s.err = s.cmd.Wait()
	close(s.exited)
}

func (s *slowCopy) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

func (s *slowCopy) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// wait returns the exit code and stderr; -1 if a signal killed ringcp.
func (s *slowCopy) wait(t *testing.T) result {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("ringcp still running 60 s later:\n%s", s.output())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(s.err, &ee) {
		code = ee.ExitCode()
	} else if s.err != nil {
		t.Fatal(s.err)
	}
	out := s.output()
	t.Logf("exit %d\n%s", code, out)
	return result{code: code, stderr: out}
}
