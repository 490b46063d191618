package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPermissionSaidOnce: a SRC an unprivileged user may not read is
// refused with "permission denied" said once (it used to read
// "permission denied: permission denied"), exit 2.
func TestPermissionSaidOnce(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run ringcp as another user (setpriv)")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skipf("setpriv is not installed (Debian: util-linux): %v", err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ringcp")
	exe, err := os.ReadFile(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src")
	randomFile(t, src, 4096, 1)
	if err := os.Chmod(src, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, src, filepath.Join(dir, "dst")).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitRefused {
		t.Fatalf("exit %v, want 2:\n%s", err, out)
	}
	if string(out) != "ringcp: "+src+": permission denied\n" || strings.Count(string(out), "permission denied") != 1 {
		t.Fatalf("stderr %q: want permission denied, said once", out)
	}
}
