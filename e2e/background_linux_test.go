package e2e

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

// The one harness for a ringcp that runs in the background, for what
// needs a real process: signals, a kill -9, another process beside it
// (QEMU, flock, `ringcp rate`), its locks seen while it is stopped. start
// starts it, waitFor watches its stderr, signal signals it, wait waits
// for its exit, and the test's cleanup kills whatever still runs.

// proc is a ringcp process started in the background.
type proc struct {
	cmd    *exec.Cmd
	pipe   io.ReadCloser // stderr, read as it comes
	onRead func(chunk []byte, at time.Time)
	mu     sync.Mutex
	stderr bytes.Buffer
	stdout bytes.Buffer
	exited chan struct{} // closed after Wait
	err    error         // from Wait
}

// start starts argv (the binary, or a wrapper such as nohup followed by
// it) in the background; onRead, when not nil, sees each piece of stderr
// as it arrives. The test's cleanup kills the process and waits for it.
func start(t *testing.T, argv []string, onRead func(chunk []byte, at time.Time)) *proc {
	t.Helper()
	return startCmd(t, exec.Command(argv[0], argv[1:]...), onRead)
}

// startCmd is start for a command made elsewhere: in a cgroup
// (cgtest.Group.Command), as another user, with an environment of its
// own. Its stdout and stderr are the harness's.
func startCmd(t *testing.T, cmd *exec.Cmd, onRead func(chunk []byte, at time.Time)) *proc {
	t.Helper()
	p := &proc{cmd: cmd, onRead: onRead, exited: make(chan struct{})}
	p.cmd.Stdout = writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.stdout.Write(b)
	})
	var err error
	if p.pipe, err = p.cmd.StderrPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
	go p.read()
	return p
}

// startRingcp starts the built binary with args.
func startRingcp(t *testing.T, args ...string) *proc {
	t.Helper()
	return start(t, append([]string{binary(t)}, args...), nil)
}

// signalAfter starts cmd, sends it sig once d has passed (for a phase
// that shows nothing on stderr: a handshake, a compare before writing),
// and waits for its exit.
func signalAfter(t *testing.T, cmd *exec.Cmd, d time.Duration, sig syscall.Signal) result {
	t.Helper()
	p := startCmd(t, cmd, nil)
	time.Sleep(d)
	p.signal(t, sig)
	return p.wait(t)
}

// read collects stderr, then waits for the process: all reads from the
// pipe must be done before Wait.
func (p *proc) read() {
	buf := make([]byte, 4096)
	for {
		n, err := p.pipe.Read(buf)
		if p.onRead != nil && n > 0 {
			p.onRead(buf[:n], time.Now())
		}
		p.mu.Lock()
		p.stderr.Write(buf[:n])
		p.mu.Unlock()
		if err != nil {
			break
		}
	}
	p.err = p.cmd.Wait()
	close(p.exited)
}

// output is the stderr so far.
func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// running is false once the process has exited.
func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// waitFor waits until stderr matches re; it fails the test if the process
// exits first or 60 s pass (a loaded machine, not a speed limit).
func (p *proc) waitFor(t *testing.T, re *regexp.Regexp) {
	t.Helper()
	const limit = 60 * time.Second
	deadline := time.Now().Add(limit)
	for !re.MatchString(p.output()) {
		select {
		case <-p.exited:
			if re.MatchString(p.output()) {
				return
			}
			t.Fatalf("ringcp exited (%v) before its stderr showed %q:\n%s", p.err, re, p.output())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on stderr after %v:\n%s", re, limit, p.output())
		}
	}
}

// hangUp closes the reading end of stderr, as a reader that went away
// would: an ssh connection dropped, a tee killed.
func (p *proc) hangUp() { p.pipe.Close() }

// wait waits up to 60 s for the process to exit and returns its exit
// code (-1 when a signal killed it), stdout and stderr.
func (p *proc) wait(t *testing.T) result {
	t.Helper()
	return p.waitUpTo(t, 60*time.Second)
}

// waitUpTo is wait with another limit.
func (p *proc) waitUpTo(t *testing.T, limit time.Duration) result {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(limit):
		t.Fatalf("ringcp still running %v later:\n%s", limit, p.output())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		code = ee.ExitCode()
	} else if p.err != nil {
		t.Fatal(p.err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Logf("exit %d\n%s", code, p.stderr.String())
	return result{code: code, stdout: p.stdout.String(), stderr: p.stderr.String()}
}

// writerFunc is a function as an io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// A copy that takes seconds, for what acts on a copy while it runs:
// signals, a SRC truncated by another process mid-copy.

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

// slowFlags copy 4 KiB requests, depth of them at a time (a batch runs
// that many jobs at once), every byte read; --direct always makes them
// O_DIRECT.
func slowFlags(depth int, direct string) []string {
	return []string{"-q", strconv.Itoa(depth), "-b", "4k", "--direct", direct, "--sparse", "never"}
}

// progressMoved: a progress line that shows more than "0 B" written.
var progressMoved = regexp.MustCompile(`\r\x1b\[Kcopying +[1-9][0-9.]* [KMG]?i?B / `)

// startSlow starts ringcp with one 4 KiB O_DIRECT request at a time, every
// byte read, and a progress line, and returns once that line shows bytes
// written.
func startSlow(t *testing.T, args ...string) *proc {
	t.Helper()
	return startSlowWith(t, "", args...)
}

// startSlowWith is startSlow run through a wrapper command (nohup), or
// directly when wrapper is "".
func startSlowWith(t *testing.T, wrapper string, args ...string) *proc {
	t.Helper()
	return startSlowDepth(t, wrapper, 1, args...)
}

// startSlowDepth is startSlowWith with depth 4 KiB requests in flight.
func startSlowDepth(t *testing.T, wrapper string, depth int, args ...string) *proc {
	t.Helper()
	argv := append(append([]string{binary(t)}, slowFlags(depth, "always")...), "--progress", "always")
	if wrapper != "" {
		argv = append([]string{wrapper}, argv...)
	}
	return startMoving(t, append(argv, args...))
}

// startMoving starts argv (ringcp with --progress always, maybe under a
// wrapper) and returns once its progress line shows bytes written.
func startMoving(t *testing.T, argv []string) *proc {
	t.Helper()
	p := start(t, argv, nil)
	p.waitFor(t, progressMoved)
	return p
}
