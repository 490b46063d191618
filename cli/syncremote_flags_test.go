package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// The copy flags a sync across hosts cannot honour are refused before
// ssh starts, each with its line, rather than ignored: a pull's DST is
// read and written by the sync itself, not the engine, so -b, -q,
// --engine and --direct would change nothing; a sync reads DST (no
// --target-is-zero), its SRC is a file or device checked end to end (no
// --expect-checksum or --size), and it always punches SRC's zero
// granules (no --sparse). They were ignored: the sync ran (here, ssh
// then failed to reach port 1: exit 1).
func TestSyncSSHFlagsRefused(t *testing.T) {
	fx := newFixture(t)
	url := "ssh://127.0.0.1:1/srv/disk.img"
	dst := filepath.Join(t.TempDir(), "d")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"-b", "1M", url, dst}, "-b, -q, --engine and --direct are not supported for a sync from an ssh:// SRC"},
		{[]string{"-q", "4", url, dst}, "-b, -q, --engine and --direct"},
		{[]string{"--engine", "pool", url, dst}, "-b, -q, --engine and --direct"},
		{[]string{"--direct", "never", url, dst}, "-b, -q, --engine and --direct"},
		{[]string{"--target-is-zero", fx.Src, url}, "--target-is-zero does not go with a sync"},
		{[]string{"--expect-checksum", "sha256:" + strings.Repeat("ab", 32), fx.Src, url}, "--expect-checksum and --size"},
		{[]string{"--sparse", "never", fx.Src, url}, "--sparse is not supported for a sync with an ssh:// end"},
	} {
		r := cli(t, append([]string{"sync", "--ssh", "ssh -o ConnectTimeout=5"}, c.args...)...)
		r.want(t, exitRefused, c.says)
	}
}
