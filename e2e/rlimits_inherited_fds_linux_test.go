package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDescriptorFloorWithInheritedDescriptors: the descriptor floor
// (limits_linux.go) compares the open-file limit with 16, but not the
// descriptors already open when ringcp starts. A parent that leaves a few
// open (a shell script's exec 3<..., a daemon that does not close its
// descriptors before exec) under `ulimit -n 16` brings back the Go
// runtime's fatal error and its 100-line stack trace ("runtime: eventfd
// failed", "netpollinit failed") that issue 10 §1 asked to replace with
// one line. Every count of inherited descriptors must give a copy or a
// one-line refusal.
func TestDescriptorFloorWithInheritedDescriptors(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(t, src, 1<<20, 71)
	for extra := 0; extra <= 12; extra++ {
		dst := filepath.Join(dir, fmt.Sprintf("dst-%d", extra))
		randomFile(t, dst, 2<<20, 72)
		before := snap(t, dst)
		var files []*os.File
		for range extra {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			files = append(files, f)
		}
		cmd := exec.Command("prlimit", "--nofile=16", "--", binary(t), "--progress", "none", src, dst)
		cmd.ExtraFiles = files
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		out := stderr.String()
		switch {
		case code == 127 && strings.Contains(out, "error while loading shared libraries"):
			continue // too few left for the dynamic loader: ringcp never ran
		case code == exitOK:
		case code == exitRefused && strings.Count(out, "\n") == 1 && strings.HasPrefix(out, "ringcp: "):
			before.Same(t)
		default:
			lines := strings.SplitN(out, "\n", 3)
			t.Errorf("ulimit -n 16 with %d descriptors inherited: exit %d and %d bytes on stderr, want a copy or one line; it starts:\n%s",
				extra, code, len(out), strings.Join(lines[:min(2, len(lines))], "\n"))
		}
	}
}
