package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	command "github.com/ringcp/ringcp/cli"
	"github.com/ringcp/ringcp/internal/cmdtest"
)

// How these tests run ringcp: in process through cli.Run (cli), as the
// built binary to completion (ringcp, runCommand), or in the background
// (start, in background_linux_test.go). The checks on files are
// internal/cmdtest's, which package cli's tests share.

func TestMain(m *testing.M) { cmdtest.Main(m) }

// result is what one ringcp command did.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the command in-process through cli.Run, the real entry point.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	code, stdout, stderr := cmdtest.Call(t, command.Run, args...)
	return result{code, stdout, stderr}
}

// want fails the test unless the command exited with code and its stderr
// contains every one of parts.
func (r result) want(t *testing.T, code int, parts ...string) {
	t.Helper()
	cmdtest.Want(t, r.code, r.stderr, code, parts...)
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
	return runToEnd(t, exec.Command(name, args...))
}

// runToEnd runs cmd to its end and returns its exit code and output
// (stdout unless the caller gave it somewhere else to go).
func runToEnd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errOut strings.Builder
	if cmd.Stdout == nil {
		cmd.Stdout = &out
	}
	cmd.Stderr = &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %s -> %d\n%s", filepath.Base(cmd.Path), strings.Join(cmd.Args[1:], " "), code, errOut.String())
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// binary is the ringcp command built once for the tests that need a real
// process (signals, resource limits); cmdtest.Main removes it.
func binary(t *testing.T) string {
	t.Helper()
	return cmdtest.Binary(t)
}

type snapshot = cmdtest.Snapshot

var (
	newFixture   = cmdtest.NewFixture
	randomFile   = cmdtest.RandomFile
	digest       = cmdtest.Digest
	snap         = cmdtest.Snap
	readRange    = cmdtest.ReadRange
	mustNotExist = cmdtest.MustNotExist
)

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
