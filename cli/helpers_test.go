package cli

import (
	"testing"

	"github.com/ringcp/ringcp/internal/cmdtest"
)

// What this package's tests share; internal/cmdtest has the rest, for
// e2e's tests too.

func TestMain(m *testing.M) { cmdtest.Main(m) }

// result is what one ringcp command did.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the command in-process through Run, the real entry point.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	code, stdout, stderr := cmdtest.Call(t, Run, args...)
	return result{code, stdout, stderr}
}

// want fails the test unless the command exited with code and its stderr
// contains every one of parts.
func (r result) want(t *testing.T, code int, parts ...string) {
	t.Helper()
	cmdtest.Want(t, r.code, r.stderr, code, parts...)
}

var (
	newFixture = cmdtest.NewFixture
	randomFile = cmdtest.RandomFile
	digest     = cmdtest.Digest
	readRange  = cmdtest.ReadRange
)
