package cli

import (
	"testing"

	"github.com/ringcp/ringcp/internal/schematest"
)

// TestJSONSyncBadLine: `ringcp sync --json` with a line that does not
// parse says command sync and the operands given. Before, it said copy,
// with src and dst empty.
func TestJSONSyncBadLine(t *testing.T) {
	fx := newFixture(t)
	s := schematest.Output(t)
	r := cli(t, "sync", "--json", "--nope", fx.Src, fx.New)
	r.want(t, exitRefused)
	got := s.Check(t, []byte(r.stdout))
	if got["command"] != "sync" || got["src"] != fx.Src || got["dst"] != fx.New {
		t.Errorf("command %v src %v dst %v, want sync %s %s", got["command"], got["src"], got["dst"], fx.Src, fx.New)
	}
}
