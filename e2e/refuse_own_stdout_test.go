package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/schematest"
)

// cliStdoutTo runs the real binary with its stdout appended to path, as
// `ringcp ... >> path` would; stderr is captured.
func cliStdoutTo(t *testing.T, path string, args ...string) result {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(binary(t), args...)
	cmd.Stdout = f
	return runToEnd(t, cmd)
}

// TestOwnStdoutByAnotherName: DST named /dev/stdout, or by a symlink to
// the file stdout goes to, is that same file: refused with exit 2, one
// line on stderr, nothing written; with --json the refusal's object goes
// to stderr too, as for DST -, not into DST.
func TestOwnStdoutByAnotherName(t *testing.T) {
	for _, name := range []string{"/dev/stdout", "alias"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			fx := newFixture(t)
			dst := name
			if name == "alias" {
				dst = filepath.Join(fx.Dir, "alias")
				if err := os.Symlink(fx.Dst, dst); err != nil {
					t.Fatal(err)
				}
			}
			r := cliStdoutTo(t, fx.Dst, fx.Src, dst)
			r.want(t, exitRefused, dst+": DST is ringcp's own stdout")
			singleLine(t, r)
			fx.Unchanged(t)
			r = cliStdoutTo(t, fx.Dst, "--json", fx.Src, dst)
			r.want(t, exitRefused, dst+": DST is ringcp's own stdout")
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if len(lines) != 2 {
				t.Fatalf("--json: stderr has %d lines, want the object and the refusal:\n%s", len(lines), r.stderr)
			}
			got := schematest.Output(t).Check(t, []byte(lines[0]))
			if e, _ := got["error"].(map[string]any); got["outcome"] != "refused" || e["field"] != "Dst" {
				t.Errorf("--json: %s", lines[0])
			}
			fx.Unchanged(t)
		})
	}
}
