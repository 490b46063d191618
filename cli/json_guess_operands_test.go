package cli

import (
	"testing"

	"github.com/ringcp/ringcp/internal/schematest"
)

// TestJSONUnknownFlagKeepsOperands: a copy flag given to verify or
// checksum, which do not take it, is refused, and the object still names
// the operands given, not the flag's value. Before, verify --max-rate 1M
// SRC DST said src "1M", dst SRC.
func TestJSONUnknownFlagKeepsOperands(t *testing.T) {
	fx := newFixture(t)
	s := schematest.Output(t)
	r := cli(t, "verify", "--json", "--max-rate", "1M", fx.Src, fx.Dst)
	r.want(t, exitRefused, "--max-rate")
	if got := s.Check(t, []byte(r.stdout)); got["src"] != fx.Src || got["dst"] != fx.Dst {
		t.Errorf("verify: src %v dst %v, want %s %s", got["src"], got["dst"], fx.Src, fx.Dst)
	}
	r = cli(t, "checksum", "--json", "--ioprio", "idle", fx.Src)
	r.want(t, exitRefused, "--ioprio")
	if got := s.Check(t, []byte(r.stdout)); got["src"] != fx.Src {
		t.Errorf("checksum: src %v, want %s", got["src"], fx.Src)
	}
}
