package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/qemutest"
)

// TestQcow2IntoExistingImage: --dst-format qcow2 writes SRC into an
// existing image (qemu-img convert -n); killed with SIGKILL while it
// writes, the image is still one qemu-img check finds without errors,
// and the next copy completes it.
func TestQcow2IntoExistingImage(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(t, src, 32<<20, 5)
	dst := filepath.Join(dir, "dst.qcow2")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", dst, "32M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v\n%s", err, out)
	}
	cmd := exec.Command(binary(t), "--dst-format", "qcow2", "--max-rate", "4M", src, dst)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if out, err := exec.Command("qemu-img", "check", dst).CombinedOutput(); err != nil || !strings.Contains(string(out), "No errors were found") {
		t.Fatalf("after kill -9, qemu-img check: %v\n%s", err, out)
	}
	cli(t, "--dst-format", "qcow2", "--verify", src, dst).want(t, exitOK)
	if out, err := exec.Command("qemu-img", "check", dst).CombinedOutput(); err != nil || !strings.Contains(string(out), "No errors were found") {
		t.Fatalf("qemu-img check: %v\n%s", err, out)
	}
	if out, err := exec.Command("qemu-img", "compare", "-q", "-f", "raw", "-F", "qcow2", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img compare: %v\n%s", err, out)
	}
}
