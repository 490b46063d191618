package engine_test

import (
	"testing"

	"github.com/ringcp/ringcp/engine"
)

// TestParseIOPrio: the names ionice users know, with the levels it
// defaults to, round-trip through String; anything else is refused.
func TestParseIOPrio(t *testing.T) {
	good := map[string]string{"": "", "idle": "idle", "be": "be:4", "be:0": "be:0", "be:7": "be:7", "rt": "rt:4", "rt:0": "rt:0"}
	for in, want := range good {
		p, err := engine.ParseIOPrio(in)
		if err != nil || p.String() != want {
			t.Errorf("ParseIOPrio(%q) = %q, %v; want %q", in, p, err, want)
		}
		if in != "" && (p.Class() == 0 || uint16(p)>>13 != uint16(p.Class())) {
			t.Errorf("%q: class %d in %#x", in, p.Class(), uint16(p))
		}
	}
	if p, _ := engine.ParseIOPrio("idle"); p != 3<<13 {
		t.Errorf("idle is %#x, want %#x (IOPRIO_CLASS_IDLE<<13)", uint16(p), 3<<13)
	}
	if p, _ := engine.ParseIOPrio("be:6"); p != 2<<13|6 {
		t.Errorf("be:6 is %#x", uint16(p))
	}
	for _, bad := range []string{"idle:1", "be:8", "be:-1", "be:", "rt:07", "none", "BE", "2", "be:1:2"} {
		if p, err := engine.ParseIOPrio(bad); err == nil {
			t.Errorf("ParseIOPrio(%q) = %q, want an error", bad, p)
		}
	}
}
