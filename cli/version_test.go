package cli

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestVersion: --version names the module version, the Go version and
// whether io_uring is usable, in words and as JSON, and exits 0.
func TestVersion(t *testing.T) {
	uringtest.NeedOn(t)
	r := cli(t, "--version")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "ringcp ") || !strings.Contains(r.stdout, runtime.Version()) ||
		!strings.Contains(r.stdout, "io_uring: usable") {
		t.Fatalf("exit %d, stdout:\n%s", r.code, r.stdout)
	}
	v := versionJSON(t, cli(t, "--version", "--json").stdout)
	if v.GoVersion != runtime.Version() || v.Version == "" || !v.IOUring || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("--version --json: %+v", v)
	}
}

// TestVersionIOUringOff: with io_uring switched off for everyone, the
// version says so and why.
func TestVersionIOUringOff(t *testing.T) {
	uringtest.SwitchOff(t, "2")
	v := versionJSON(t, cli(t, "--version", "--json").stdout)
	if v.IOUring || !strings.Contains(v.IOUringWhy, "io_uring_disabled") {
		t.Fatalf("io_uring %v (%q): want false, naming kernel.io_uring_disabled", v.IOUring, v.IOUringWhy)
	}
}

func versionJSON(t *testing.T, out string) versionInfo {
	t.Helper()
	var v versionInfo
	var env envelope
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || env.Command != "version" || env.Schema != jsonSchema {
		t.Fatalf("not the envelope (%v): %s", err, out)
	}
	v.Version = env.Version // the envelope carries it
	return v
}
