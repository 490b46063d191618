package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestQuitMidCopyExitsAsRefused: SIGQUIT (Ctrl-\ at the terminal, or kill
// -QUIT) is not among the stop signals, so the Go runtime takes it: a
// 200-line goroutine dump, and exit status 2. Exit 2 is ringcp's
// "refused: nothing written, DST untouched". Here DST was truncated and
// is left at SRC's full size holding a partial copy, and a script that
// trusts the exit code keeps it as untouched. The same status comes from
// any panic or runtime fatal error mid-copy. A stop by SIGQUIT must not
// exit 2 once DST was changed, and should say what DST holds, as SIGINT
// and SIGTERM do.
func TestQuitMidCopyExitsAsRefused(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "dst")
	randomFile(t, dst, 4<<20, 67)
	before := snap(t, dst)
	s := startSlow(t, slowSrc(t), dst)
	s.signal(t, syscall.SIGQUIT)
	r := s.wait(t)
	fi, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	changed := fi.Size() != 4<<20 || digest(t, dst) != before.Sum
	if r.code == exitRefused && changed {
		first, _, _ := strings.Cut(r.stderr, "\n")
		t.Fatalf("SIGQUIT mid-copy: exit 2 (\"refused, nothing written\") and %d lines on stderr (%q...), but DST was changed: now %d bytes",
			strings.Count(r.stderr, "\n"), first, fi.Size())
	}
}
