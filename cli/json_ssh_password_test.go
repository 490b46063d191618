package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/schematest"
)

// TestSyncSSHPasswordNotShown: an ssh:// end with a password is refused
// (ssh takes keys), and the refusal does not print the password, in the
// line or the --json object's src, dst and message. Before, it printed
// it three times.
func TestSyncSSHPasswordNotShown(t *testing.T) {
	fx := newFixture(t)
	url := "ssh://admin:hunter2pw@127.0.0.1:1/srv/disk.img"
	for _, args := range [][]string{
		{"sync", "--json", fx.Src, url},
		{"sync", "--json", url, filepath.Join(t.TempDir(), "d")},
		{"sync", fx.Src, url},
	} {
		r := cli(t, args...)
		r.want(t, exitRefused, "a password in the URL")
		if strings.Contains(r.stdout+r.stderr, "hunter2pw") {
			t.Errorf("%v: the password is shown:\n%s%s", args, r.stdout, r.stderr)
		}
		if args[1] == "--json" {
			schematest.Output(t).Check(t, []byte(r.stdout))
		}
	}
}
