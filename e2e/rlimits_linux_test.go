package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/uringtest"
)

// Everything a copy needs is acquired before DST changes: when something
// runs out, ringcp refuses with exit 2 and one line, and DST is exactly as
// it was.

// limited runs the ringcp binary under prlimit and returns its exit code
// and stderr.
func limited(t *testing.T, limit string, args ...string) (int, string) {
	t.Helper()
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	r := runCommand(t, "prlimit", append([]string{limit, "--", binary(t), "--progress", "none"}, args...)...)
	return r.code, r.stderr
}

// TestRunsOutOfDescriptors: with every open-file limit from 1 to 16, a
// copy onto an existing DST either completes exactly (exit 0) or is
// refused (exit 2, one line) with DST untouched: never truncated, never a
// Go runtime crash. Both engines; a new DST is never left behind.
func TestRunsOutOfDescriptors(t *testing.T) {
	uringtest.NeedOn(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := randomFile(t, src, 3<<20+5, 61)
	for _, engine := range []string{"uring", "pool"} {
		completed := false
		for n := 1; n <= 16; n++ {
			dst := filepath.Join(dir, fmt.Sprintf("dst-%s-%d", engine, n))
			randomFile(t, dst, 5<<20, 62)
			before := snap(t, dst)
			fresh := dst + ".new"
			code, stderr := limited(t, fmt.Sprintf("--nofile=%d", n), "--engine", engine, src, dst)
			if n < 4 && code == 127 {
				continue // too few for the dynamic loader to start the binary at all
			}
			switch code {
			case exitOK:
				completed = true
				if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, data) {
					t.Errorf("%s, ulimit -n %d: exit 0 but DST is not SRC", engine, n)
				}
			case exitRefused:
				if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "ringcp: ") {
					t.Errorf("%s, ulimit -n %d: want one line, got:\n%s", engine, n, stderr)
				}
				before.Same(t)
			default:
				t.Errorf("%s, ulimit -n %d: exit %d, want 0 or 2:\n%s", engine, n, code, stderr)
			}
			code, _ = limited(t, fmt.Sprintf("--nofile=%d", n), "--engine", engine, src, fresh)
			if code != exitOK {
				mustNotExist(t, fresh)
			}
		}
		if !completed {
			t.Errorf("%s: no limit up to 16 let the copy complete", engine)
		}
	}
}

// TestRunsOutOfAddressSpace: buffers that cannot be mapped are a refusal
// before DST is cut. 1 GB of address space lets the Go runtime start (it
// reserves some 600 MB) but not map 256 MiB of buffers beside it.
func TestRunsOutOfAddressSpace(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	randomFile(t, src, 600<<20, 63)
	randomFile(t, dst, 1<<20, 64)
	before := snap(t, dst)
	for _, c := range []struct {
		as, bs, qd, says string
	}{
		{"--as=1000000000", "128M", "2", "cannot map 2 buffers of 134217728 bytes"},
		{"--as=2000000000", "1G", "1024", "cannot map 1 buffers of 1073741824 bytes"}, // the depth is capped first
	} {
		code, stderr := limited(t, c.as, "-b", c.bs, "-q", c.qd, src, dst)
		if code != exitRefused || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.says) {
			t.Fatalf("%s -b %s -q %s: exit %d, want 2 with one line naming the buffers:\n%s", c.as, c.bs, c.qd, code, stderr)
		}
		before.Same(t)
	}
}
