package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sync across hosts whose ssh never reached a ringcp on the other host
// (it could not log in, or the other host's shell printed a banner where
// the protocol was due) wrote nothing: no change goes out or is applied
// before the other side's welcome. ringcp said DST "holds a mix of old
// and new granules" all the same, which sends the user to check or
// restore a DST that was never touched.
func TestSyncNotStartedSaysUnchanged(t *testing.T) {
	fx := newFixture(t)
	dir := t.TempDir()
	fake := filepath.Join(dir, "ssh")
	script := "#!/bin/sh\necho 'root@host: Permission denied (publickey).' >&2\nexit 255\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "dst")
	if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{fx.Src, "ssh://host/srv/disk.img"}, {"ssh://host/srv/disk.img", dst}} {
		r := cli(t, append([]string{"sync", "--ssh", fake}, args...)...)
		r.want(t, ExitFailed, "Permission denied", "was not changed")
		if strings.Contains(r.stderr, "mix of old and new") {
			t.Errorf("sync %v: says DST holds a mix, though the sync never started:\n%s", args, r.stderr)
		}
	}
}
