package cmdtest

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/engine/enginetest"
)

// RandomFile writes n reproducible random bytes to path and returns them.
func RandomFile(t testing.TB, path string, n int, seed uint64) []byte {
	t.Helper()
	b := enginetest.RandomBytes(int64(n), seed)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// Digest is the SHA-256 of a file or device, to prove nothing was written.
func Digest(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// Snapshot is a file's content and mtime, to prove nothing was written;
// Same fails the test if either changed.
type Snapshot struct {
	Path  string
	Sum   [32]byte
	MTime time.Time
}

// Snap takes a file's Snapshot.
func Snap(t testing.TB, path string) Snapshot {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return Snapshot{path, Digest(t, path), fi.ModTime()}
}

// Same fails the test if the file's content or mtime changed since s.
func (s Snapshot) Same(t testing.TB) {
	t.Helper()
	fi, err := os.Stat(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if Digest(t, s.Path) != s.Sum || !fi.ModTime().Equal(s.MTime) {
		t.Errorf("%s changed (mtime %v, was %v) although the copy was refused", s.Path, fi.ModTime(), s.MTime)
	}
}

// ReadRange reads n bytes at off from a file or device.
func ReadRange(t testing.TB, path string, off, n int64) []byte {
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

// MustNotExist fails the test if path exists.
func MustNotExist(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("%s exists: a copy that did not complete left it behind", path)
	}
}

// Want fails the test unless a command exited with want and its stderr
// contains every one of parts.
func Want(t testing.TB, code int, stderr string, want int, parts ...string) {
	t.Helper()
	if code != want {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, want, stderr)
	}
	for _, p := range parts {
		if !strings.Contains(stderr, p) {
			t.Errorf("stderr lacks %q:\n%s", p, stderr)
		}
	}
}

// Call runs the command in process through run (cli.Run, the real entry
// point), logs its stderr, and returns what it did.
func Call(t testing.TB, run func(args []string, stdout, stderr io.Writer) int, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	t.Logf("ringcp %s -> %d\n%s", strings.Join(args, " "), code, errOut.String())
	return code, out.String(), errOut.String()
}
