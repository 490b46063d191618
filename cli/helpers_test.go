package cli

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine/enginetest"
	"github.com/ringcp/ringcp/internal/buildtest"
)

// result is what one ringcp command did.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the command in-process through Run, the real entry point.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(args, &out, &errOut)
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

// diskImage makes a real disk image of one kind with qemu-img in dir and
// returns its path: qcow2, qcow, vmdk, vmdk-flat (a descriptor file and
// its flat extent), vhdx, vdi, vpc (dynamic VHD), vpc-fixed, qed, luks.
func diskImage(t *testing.T, dir, kind string) string {
	t.Helper()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skipf("qemu-img is not installed (Debian: qemu-utils): %v", err)
	}
	path := filepath.Join(dir, "img."+kind)
	format, args := kind, []string(nil)
	switch kind {
	case "vmdk-flat":
		format, args = "vmdk", []string{"-o", "subformat=monolithicFlat"}
	case "vpc-fixed":
		format, args = "vpc", []string{"-o", "subformat=fixed"}
	case "luks":
		// iter-time 100 ms: with less, a loaded machine makes QEMU's
		// PBKDF benchmark fail ("Unable to get accurate CPU usage").
		args = []string{"--object", "secret,id=sec0,data=ringcp-test", "-o", "key-secret=sec0,iter-time=100"}
	}
	cmd := append(append([]string{"create", "-q", "-f", format}, args...), path, "1M")
	var out []byte
	var err error
	for try := 0; try < 3; try++ { // the PBKDF benchmark can still miss under load
		if out, err = exec.Command("qemu-img", cmd...).CombinedOutput(); err == nil {
			return path
		}
	}
	t.Fatalf("qemu-img %s: %v\n%s", strings.Join(cmd, " "), err, out)
	return path
}

// cliStdoutTo runs the real binary with its stdout appended to path, as
// `ringcp ... >> path` would; stderr is captured.
func cliStdoutTo(t *testing.T, path string, args ...string) result {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var errOut bytes.Buffer
	cmd := exec.Command(binary(t), args...)
	cmd.Stdout, cmd.Stderr = f, &errOut
	err = cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	t.Logf("ringcp %s >> %s -> %d\n%s", strings.Join(args, " "), path, code, errOut.String())
	return result{code: code, stderr: errOut.String()}
}

// binary is the ringcp command built once for the tests that need a real
// process (signals, resource limits).
func binary(t *testing.T) string {
	t.Helper()
	return buildtest.Binary(t)
}
