package cli

import (
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/schematest"
)

// TestJSONRefusalNamesOwnFlag: a line refused for the value of one of
// ringcp's own flags (the progress flags, --state) names it in
// error.flag, as pflag's own refusals do. Before, error.flag was empty
// though the message began with the flag.
func TestJSONRefusalNamesOwnFlag(t *testing.T) {
	fx := newFixture(t)
	s := schematest.Output(t)
	dst := filepath.Join(t.TempDir(), "d")
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--json", "--progress", "json", "--progress-fd", "1", fx.Src, dst}, "--progress-fd"},
		{[]string{"sync", "--json", "--progress", "qemu", "--progress-fd", "1", fx.Src, dst}, "--progress-fd"},
		{[]string{"verify", "--json", "--progress", "json", "--progress-fd", "1", fx.Src, fx.Dst}, "--progress-fd"},
		{[]string{"checksum", "--json", "--progress", "json", "--progress-fd", "1", fx.Src}, "--progress-fd"},
		{[]string{"--json", "--progress", "bogus", fx.Src, dst}, "--progress"},
		{[]string{"--json", "--progress-interval", "0s", fx.Src, dst}, "--progress-interval"},
		{[]string{"--json", "--progress-fd", "99", fx.Src, dst}, "--progress-fd"},
		{[]string{"verify", "--json", "--progress-fd", "99", fx.Src, fx.Dst}, "--progress-fd"},
	} {
		r := cli(t, c.args...)
		if r.code != exitRefused {
			t.Errorf("%v: exit %d, want %d", c.args, r.code, exitRefused)
			continue
		}
		got := s.Check(t, []byte(r.stdout))
		if e, _ := got["error"].(map[string]any); e["flag"] != c.flag || e["kind"] != "bad_input" {
			t.Errorf("%v: error %v, want bad_input naming %s", c.args, e, c.flag)
		}
	}
}
