package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/sshtest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// TestSyncOverSSHSrcChanged: a sync across hosts whose SRC is written
// in place while it is read fails as a local copy does (exit 1, a line
// naming the file that changed, --json's error naming it too), both
// ways: a push (SRC here) dropped the engine's finding and exited 0, a
// pull (SRC there) never looked. A new DST is not named; an existing
// one is said to hold a mix.
func TestSyncOverSSHSrcChanged(t *testing.T) {
	srv := sshtest.Start(t)
	// A push's engine reads up to 88 MiB ahead of what the sync compared
	// (the progress): 64 MiB of windows ready, 24 MiB in syncproto's
	// workers. SRC is larger, and is written once the progress shows
	// its first percent, so that the engine still reads it then.
	const size = 128 << 20
	for _, c := range []struct {
		name           string
		pull, existing bool
	}{{"push/new", false, false}, {"push/existing", false, true}, {"pull/new", true, false}, {"pull/existing", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			src, dst := filepath.Join(d, "src"), filepath.Join(d, "dst")
			synctest.WriteFile(t, src, synctest.Random(71, size))
			if c.existing {
				synctest.WriteFile(t, dst, synctest.Random(72, size))
			}
			a, b := src, srv.URL(dst)
			if c.pull {
				a, b = srv.URL(src), dst
			}
			args := []string{"sync", "--ssh", "ssh " + strings.Join(srv.Options, " "), "--remote-ringcp", binary(t),
				"--max-rate", "32M", "--json", a, b}
			r := whileWritten(t, src, 1, args)
			r.want(t, exitFailed, src+" changed while it was read (it was modified")
			var j jsonReport
			if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
				t.Fatalf("%v: %s", err, r.stdout)
			}
			if j.Outcome != "failed" || j.Error == nil || j.Error.Kind != "failed" || j.Error.Path != src || !strings.Contains(j.Error.Message, "changed while it was read") {
				t.Errorf("--json: %s", r.stdout)
			}
			if !c.existing {
				mustNotExist(t, dst)
			}
		})
	}
}
