package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/schematest"
	"golang.org/x/sys/unix"
)

// dd's everyday ends as a process sees them (issue 22, item 5): "-" as
// stdin and stdout, /dev/zero, /dev/urandom and /dev/null, for the plain
// command and for ringcp dd.

var endSizes = []int{0, 1, 511, 4097, 1<<20 + 3}

// withStdin runs the binary with stdin (nil: none) and returns what it
// wrote to stdout and stderr.
func withStdin(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	return runToEnd(t, cmd)
}

// TestStdoutDstProcess: `ringcp SRC -` and `ringcp - -` put SRC's bytes
// on stdout, alone: with --json the object is a line of stderr, with
// --progress qemu the records go to stderr.
func TestStdoutDstProcess(t *testing.T) {
	s := schematest.Output(t)
	for _, n := range endSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "src")
			data := randomFile(t, src, n, uint64(n)+3)
			for _, args := range [][]string{{src, "-"}, {"--json", src, "-"}, {"--progress", "qemu", src, "-"}, {"-"}} {
				var in []byte
				if args[0] == "-" {
					args, in = []string{"-", "-"}, data
				}
				r := withStdin(t, in, args...)
				if r.code != 0 || r.stdout != string(data) {
					t.Fatalf("%v: exit %d, stdout %d bytes, want %d\n%s", args, r.code, len(r.stdout), n, r.stderr)
				}
				if args[0] == "--json" {
					got := s.Check(t, []byte(jsonLine(t, r.stderr)))
					if got["outcome"] != "complete" || got["dst"] != "-" {
						t.Fatalf("--json on stderr: %s", r.stderr)
					}
				}
			}
			r := withStdin(t, nil, "dd", "if="+src, "bs=4096", "--json")
			if r.code != 0 || r.stdout != string(data) {
				t.Fatalf("dd: exit %d, stdout %d bytes, want %d\n%s", r.code, len(r.stdout), n, r.stderr)
			}
			if got := s.Check(t, []byte(jsonLine(t, r.stderr))); got["command"] != "dd" || got["outcome"] != "complete" {
				t.Fatalf("dd --json on stderr: %s", r.stderr)
			}
		})
	}
}

// jsonLine is the one line of stderr that is a JSON object.
func jsonLine(t *testing.T, stderr string) string {
	t.Helper()
	var found []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "{") {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d JSON lines on stderr:\n%s", len(found), stderr)
	}
	return found[0]
}

// TestStdoutRefusedJSONOnStderr: a refused copy to stdout writes nothing
// there, not even its --json object.
func TestStdoutRefusedJSONOnStderr(t *testing.T) {
	s := schematest.Output(t)
	for _, args := range [][]string{{"--json", "/dev/zero", "-"}, {"--json", "--bogus", "/dev/zero", "-"}} {
		r := withStdin(t, nil, args...)
		if r.code != exitRefused || r.stdout != "" {
			t.Fatalf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
		if got := s.Check(t, []byte(jsonLine(t, r.stderr))); got["outcome"] != "refused" {
			t.Fatalf("%v: %s", args, r.stderr)
		}
	}
	r := withStdin(t, nil, "--progress", "qemu", "--progress-fd", "1", "/dev/zero", "-", "--length", "1")
	r.want(t, exitRefused, "DST -")
}

// TestTerminalStdoutRefused: stdout that is a terminal is refused, one
// line, before anything is read or written.
func TestTerminalStdoutRefused(t *testing.T) {
	tty := openTerminal(t)
	cmd := exec.Command(binary(t), "/dev/zero", "-", "--length", "4096")
	cmd.Stdout = tty
	r := runToEnd(t, cmd)
	r.want(t, exitRefused, "standard output is a terminal")
	singleLine(t, r)
}

// ddCase runs GNU dd and ringcp dd on the same operands (stdin given to
// both) and compares what they wrote to of= (or stdout) and their
// records lines.
func ddCase(t *testing.T, stdin []byte, ops ...string) {
	t.Helper()
	dir := t.TempDir()
	var outs [2]string
	var errs [2]string
	for i, name := range []string{"dd", binary(t)} {
		args := []string{}
		if i == 1 {
			args = append(args, "dd")
		}
		dst := ""
		for _, op := range ops {
			if op == "of=OUT" {
				dst = filepath.Join(dir, fmt.Sprint("out", i))
				op = "of=" + dst
			}
			args = append(args, op)
		}
		cmd := exec.Command(name, args...)
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		r := runToEnd(t, cmd)
		if r.code != 0 {
			t.Fatalf("%s %v: exit %d\n%s", name, args, r.code, r.stderr)
		}
		outs[i], errs[i] = r.stdout, r.stderr
		if dst != "" {
			b, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			outs[i] = string(b)
		}
	}
	if outs[0] != outs[1] {
		t.Fatalf("%v: GNU dd wrote %d bytes, ringcp dd %d, or others", ops, len(outs[0]), len(outs[1]))
	}
	theirs, ours := ddRecords(errs[0]), ddRecords(errs[1])
	if theirs != ours {
		t.Fatalf("%v: GNU dd says %q, ringcp dd %q", ops, theirs, ours)
	}
}

// ddRecords is a dd's records lines.
func ddRecords(stderr string) string {
	var keep []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "records") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestDDEndsAgainstGNUdd: ringcp dd with stdin, stdout, /dev/zero and
// /dev/null, against GNU dd's output and records lines.
func TestDDEndsAgainstGNUdd(t *testing.T) {
	if _, err := exec.LookPath("dd"); err != nil {
		t.Skipf("GNU dd is not installed (Debian: coreutils): %v", err)
	}
	src := filepath.Join(t.TempDir(), "src")
	data := randomFile(t, src, 1<<20+4097, 11)
	cases := [][]string{
		{"if=" + src, "bs=4096"},
		{"if=" + src, "bs=4096", "skip=3", "count=5"},
		{"if=" + src, "bs=1000", "count=7", "iflag=skip_bytes", "skip=333"},
		{"if=" + src, "of=/dev/null", "bs=1M"},
		{"if=/dev/zero", "of=OUT", "bs=4096", "count=3"},
		{"if=/dev/zero", "of=OUT", "bs=1000", "count=5"},
		{"if=/dev/zero", "of=OUT", "count=4097", "iflag=count_bytes"},
		{"if=/dev/zero", "of=OUT", "bs=512", "count=3", "seek=2"},
		{"if=/dev/zero", "bs=511", "count=3"},
		{"if=/dev/zero", "count=0"},
		{"of=OUT", "bs=512", "count=3", "iflag=fullblock"},
		{"of=OUT", "bs=4096", "iflag=fullblock"},
		{"bs=4096", "skip=2", "count=3", "iflag=fullblock"},
		{"bs=65536", "iflag=fullblock"},
		{"of=OUT", "bs=512", "seek=3", "conv=notrunc", "iflag=fullblock", "count=2"},
	}
	for _, ops := range cases {
		t.Run(strings.Join(ops, " "), func(t *testing.T) {
			var in []byte
			if !strings.HasPrefix(ops[0], "if=") {
				in = data
			}
			ddCase(t, in, ops...)
		})
	}
}

// TestReaderGoesAway: a reader of stdout that stops early (head -c)
// fails the copy: exit 1, EPIPE named, no hang; for the plain command
// and for dd.
func TestReaderGoesAway(t *testing.T) {
	for _, args := range [][]string{{"/dev/urandom", "-", "--length", "10G"}, {"dd", "if=/dev/urandom", "bs=1M", "count=10240"}} {
		t.Run(args[0], func(t *testing.T) {
			cmd := exec.Command(binary(t), args...)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(out, make([]byte, 100)); err != nil {
				t.Fatal(err)
			}
			out.Close()
			code := waitUpTo(t, cmd, 60*time.Second)
			if code != 1 || !strings.Contains(errOut.String(), "broken pipe") || !strings.Contains(errOut.String(), "stdout") {
				t.Fatalf("exit %d, want 1 naming stdout's broken pipe:\n%s", code, errOut.String())
			}
		})
	}
}

// waitUpTo waits for cmd, and fails the test (killing it) if it has
// not ended within limit.
func waitUpTo(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running after %s", limit)
	}
	return -1
}

// TestSignalToStdoutCopy: SIGTERM and SIGINT stop a copy from
// /dev/urandom to stdout, read or not (a full pipe), with 128+signal.
func TestSignalToStdoutCopy(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		for _, reading := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v/reading=%v", sig, reading), func(t *testing.T) {
				cmd := exec.Command(binary(t), "/dev/urandom", "-", "--length", "100G")
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				var errOut bytes.Buffer
				cmd.Stderr = &errOut
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				defer out.Close()
				if _, err := io.ReadFull(out, make([]byte, 1<<20)); err != nil {
					t.Fatal(err)
				}
				if reading {
					go io.Copy(io.Discard, out)
				}
				time.Sleep(300 * time.Millisecond)
				cmd.Process.Signal(sig)
				if code := waitUpTo(t, cmd, 30*time.Second); code != 128+int(sig) {
					t.Fatalf("exit %d, want %d:\n%s", code, 128+int(sig), errOut.String())
				}
			})
		}
	}
}

// TestCharRefusedProcess: the character devices that are no copy's end
// are refused with one line and exit 2, DST unchanged.
func TestCharRefusedProcess(t *testing.T) {
	for _, c := range []struct {
		src, dst, want string
	}{
		{"/dev/null", "FILE", "reads nothing"},
		{"FILE", "/dev/full", "every write fails"},
		{"FILE", "/dev/zero", "for a read test DST is /dev/null"},
		{"FILE", "/dev/urandom", "entropy pool"},
		{"/dev/zero", "FILE", "never ends"},
		{"/dev/ptmx", "FILE", "is a character device"},
	} {
		t.Run(c.src+" "+c.dst, func(t *testing.T) {
			fx := newFixture(t)
			at := func(s string) string {
				if s == "FILE" {
					return fx.Dst
				}
				return s
			}
			src := at(c.src)
			if src == fx.Dst {
				src = fx.Src
			}
			r := ringcp(t, src, at(c.dst))
			r.want(t, exitRefused, c.want)
			singleLine(t, r)
			fx.Unchanged(t)
		})
	}
}

// TestDDWipesLoopDevice: `ringcp dd if=/dev/zero of=/dev/loopN bs=1M`
// without count wipes the whole device, as GNU dd does (without its
// "No space left" failure at the end); read back.
func TestDDWipesLoopDevice(t *testing.T) {
	blocktest.NeedRoot(t)
	const size = 4<<20 + 4096
	dev, _ := blocktest.Device(t, size)
	randomFile(t, dev, size, 4)
	r := ringcp(t, "dd", "if=/dev/zero", "of="+dev, "bs=1M")
	r.want(t, exitOK, "bytes")
	if got := readRange(t, dev, 0, size); !bytes.Equal(got, make([]byte, size)) {
		t.Fatal("the device is not all zeros after the wipe")
	}
}

// openTerminal is the terminal end of a new pseudo-terminal.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, m.Fd(), unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestNullDstWithOutputToNull: `ringcp SRC /dev/null >/dev/null
// 2>/dev/null` (a read test in a cron job) is not "DST is ringcp's own
// stdout": writes to /dev/null vanish, nothing mixes.
func TestNullDstWithOutputToNull(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	randomFile(t, src, 4097, 8)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, which := range []string{"stdout", "stderr"} {
		cmd := exec.Command(binary(t), src, "/dev/null")
		if which == "stdout" {
			cmd.Stdout = null
			if code := waitRun(t, cmd); code != 0 {
				t.Fatalf("stdout on /dev/null: exit %d", code)
			}
			continue
		}
		cmd.Stderr = null
		if code := waitRun(t, cmd); code != 0 {
			t.Fatalf("stderr on /dev/null: exit %d", code)
		}
	}
}

// waitRun runs cmd to its end and returns its exit code.
func waitRun(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return waitUpTo(t, cmd, 60*time.Second)
}

// TestStdoutToFile: `ringcp SRC - > file` writes the file in order, as a
// stream, and ends with it whole.
func TestStdoutToFile(t *testing.T) {
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "out")
	data := randomFile(t, src, 3<<20+511, 12)
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(binary(t), src, "-")
	cmd.Stdout = f
	if code := waitRun(t, cmd); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, data) {
		t.Fatalf("the file behind stdout holds %d bytes, not SRC's %d", len(got), len(data))
	}
}
