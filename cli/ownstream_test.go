package cli

import (
	"bytes"
	"os"
	"testing"
)

// TestRefuseOwnStderr: a DST that is ringcp's stderr is refused too. The
// refusal line itself then lands in DST (it is stderr), and nothing else:
// DST keeps its bytes, with that one line after them.
func TestRefuseOwnStderr(t *testing.T) {
	fx := newFixture(t)
	f, err := os.OpenFile(fx.Dst, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, _ := os.ReadFile(fx.Dst)
	var out bytes.Buffer
	if code := Run([]string{fx.Src, fx.Dst}, &out, f); code != exitRefused {
		t.Errorf("exit %d, want %d", code, exitRefused)
	}
	after, _ := os.ReadFile(fx.Dst)
	line, ok := bytes.CutPrefix(after, before)
	want := "ringcp: " + fx.Dst + ": DST is ringcp's own stderr: the copy and ringcp's output would overwrite each other (redirect stderr elsewhere)\n"
	if !ok || string(line) != want {
		t.Errorf("DST changed beyond the refusal line: %d bytes before, %d after; added %q", len(before), len(after), line)
	}
}
