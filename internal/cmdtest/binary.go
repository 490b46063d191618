package cmdtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Main runs a package's tests; call it from TestMain. Copies started by
// the tests, in process or as the built binary, keep their rate control
// files in a folder of this run ($RINGCP_RUNDIR) rather than /run/ringcp,
// and that folder and the binary Binary built are removed when the tests
// end: a test run leaves nothing in the temporary folder.
func Main(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmdtest:", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "ringcp-test-")
	if err != nil {
		return 1, err
	}
	rundir := filepath.Join(dir, "run")
	if err := os.Mkdir(rundir, 0o700); err != nil {
		return 1, errors.Join(err, os.RemoveAll(dir))
	}
	os.Setenv("RINGCP_RUNDIR", rundir)
	build.dir = dir
	code := m.Run()
	return code, os.RemoveAll(dir)
}

// build is the one ringcp binary of a test process, made on first use in
// the folder Main removes.
var build struct {
	dir  string // Main's folder; "" when Main is not running the tests
	once sync.Once
	path string
	err  error
}

// Binary returns the path of a ringcp built from this module, once per
// test process. It fails the test when the package's TestMain does not
// call Main, which removes the binary afterwards.
func Binary(t testing.TB) string {
	t.Helper()
	if build.dir == "" {
		t.Fatal("cmdtest.Binary: the package's TestMain must call cmdtest.Main, which removes the binary afterwards")
	}
	build.once.Do(func() {
		path := filepath.Join(build.dir, "ringcp")
		// Built as the README says to build it: without cgo, which only
		// the net package would bring (glibc's resolver), and with it
		// thread starts that fail under a tight address-space limit.
		cmd := exec.Command("go", "build", "-o", path, "github.com/ringcp/ringcp")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("%w\n%s", err, out)
			return
		}
		build.path = path
	})
	if build.err != nil {
		t.Fatalf("go build: %v", build.err)
	}
	return build.path
}
