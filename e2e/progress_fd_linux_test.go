package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgressFd: --progress-fd sends the lines to a descriptor of the
// caller's (virt-v2v and nbdcopy style), and refuses one that is not open.
func TestProgressFd(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	randomFile(t, src, 8<<20, 2)
	f, err := os.Create(filepath.Join(dir, "progress"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "--progress", "percent", "--progress-fd", "3", src, dst)
	cmd.ExtraFiles = []*os.File{f}
	out, err := cmd.CombinedOutput()
	f.Close()
	if err != nil || strings.Contains(string(out), "/100") {
		t.Fatalf("%v: stderr %q should hold no progress", err, out)
	}
	if b, _ := os.ReadFile(f.Name()); !bytes.HasSuffix(b, []byte("100/100\n")) {
		t.Fatalf("descriptor 3 got %q", b)
	}
	cli(t, "--progress", "json", "--progress-fd", "99", src, dst).want(t, exitRefused, "--progress-fd 99: not an open file descriptor")
	cli(t, "--progress-interval", "0s", src, dst).want(t, exitRefused, "--progress-interval 0s: must be more than 0")
}
