// Package buildtest builds the ringcp command once per test process, for
// tests that need it as a process of its own: signals, kill -9, resource
// limits, a mount namespace, the real peers beside it.
package buildtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once sync.Once
	path string
	err  error
)

// Binary returns the path of a ringcp built from this module; the temp
// dir it lives in is left to the OS.
func Binary(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		dir, e := os.MkdirTemp("", "ringcp-test-")
		if e != nil {
			err = e
			return
		}
		path = filepath.Join(dir, "ringcp")
		// Built as the README says to build it: without cgo, which only
		// the net package would bring (glibc's resolver), and with it
		// thread starts that fail under a tight address-space limit.
		cmd := exec.Command("go", "build", "-o", path, "github.com/ringcp/ringcp")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, e := cmd.CombinedOutput(); e != nil {
			err = &buildError{e, string(out)}
		}
	})
	if err != nil {
		t.Fatalf("go build: %v", err)
	}
	return path
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }
