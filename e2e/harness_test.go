package e2e

import (
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	command "github.com/ringcp/ringcp/cli"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/buildtest"
)

// result is what one ringcp command did.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the command in-process through cli.Run, the real entry point.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := command.Run(args, &out, &errOut)
	t.Logf("ringcp %s -> %d\n%s", strings.Join(args, " "), code, errOut.String())
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// want fails the test unless the command exited with code and its stderr
// contains every one of parts.
func (r result) want(t *testing.T, code int, parts ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d; stderr:\n%s", r.code, code, r.stderr)
	}
	for _, p := range parts {
		if !strings.Contains(r.stderr, p) {
			t.Errorf("stderr lacks %q:\n%s", p, r.stderr)
		}
	}
}

// ringcp runs the built binary, as a separate process.
func ringcp(t *testing.T, args ...string) result {
	t.Helper()
	return runCommand(t, binary(t), args...)
}

// runCommand runs a program (ringcp, or ringcp under a wrapper such as
// prlimit) and returns its exit code and output; a program that cannot
// start fails the test.
func runCommand(t *testing.T, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %s -> %d\n%s", filepath.Base(name), strings.Join(args, " "), code, errOut.String())
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// binary is the ringcp command built once for the tests that need a real
// process (signals, resource limits).
func binary(t *testing.T) string {
	t.Helper()
	return buildtest.Binary(t)
}

// randomFile writes n reproducible random bytes to path and returns them.
func randomFile(t testing.TB, path string, n int, seed uint64) []byte {
	t.Helper()
	b := enginetest.RandomBytes(int64(n), seed)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// digest is the SHA-256 of a file or device, to prove nothing was written.
func digest(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// snapshot is a file's content and mtime, to prove nothing was written;
// same fails the test if either changed.
type snapshot struct {
	path  string
	sum   [32]byte
	mtime time.Time
}

func snap(t testing.TB, path string) snapshot {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{path, digest(t, path), fi.ModTime()}
}

func (s snapshot) same(t testing.TB) {
	t.Helper()
	fi, err := os.Stat(s.path)
	if err != nil {
		t.Fatal(err)
	}
	if digest(t, s.path) != s.sum || !fi.ModTime().Equal(s.mtime) {
		t.Errorf("%s changed (mtime %v, was %v) although the copy was refused", s.path, fi.ModTime(), s.mtime)
	}
}

// readRange reads n bytes at off from a file or device.
func readRange(t testing.TB, path string, off, n int64) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatalf("read %d bytes at %d of %s: %v", n, off, path, err)
	}
	return b
}

// mustNotExist fails the test if path exists.
func mustNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("%s exists: a copy that did not complete left it behind", path)
	}
}

// moduleRoot is the repository's root, from this package's folder (where
// go test runs its tests).
const moduleRoot = ".."

// The exit codes, as the README and --help promise them.
const (
	exitOK          = 0
	exitFailed      = 1
	exitRefused     = 2
	exitMismatch    = 3
	exitInterrupted = 128 // plus the signal number
)

// TestMain keeps the control files of every copy this package's tests
// start, in-process or as a binary, out of /run.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ringcp-run-")
	if err != nil {
		panic(err)
	}
	os.Setenv("RINGCP_RUNDIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
