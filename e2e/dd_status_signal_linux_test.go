package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestDDStatusSignal: SIGUSR1 makes ringcp dd print dd's records and
// transfer lines while the copy goes on.
func TestDDStatusSignal(t *testing.T) {
	src := slowSrc(t)
	dst := filepath.Join(t.TempDir(), "dst")
	p := startRingcp(t, "dd", "if="+src, "of="+dst, "bs=4k", "iflag=direct", "oflag=direct", "status=progress")
	p.waitFor(t, regexp.MustCompile(` bytes \(`)) // status=progress: a line a second
	p.signal(t, syscall.SIGUSR1)
	p.waitFor(t, regexp.MustCompile(` records out\n`))
	p.signal(t, syscall.SIGINT)
	r := p.wait(t)
	if r.code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130:\n%s", r.code, r.stderr)
	}
	if strings.Count(r.stderr, " records in\n") != 2 || !strings.Contains(r.stderr, "interrupted by SIGINT") {
		t.Fatalf("want the records lines on SIGUSR1 and at the end:\n%s", r.stderr)
	}
}
