package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// manFile is the page as the repository ships it.
var manFile = filepath.Join("..", "docs", "ringcp.1")

// TestManPageCurrent: docs/ringcp.1 is what `ringcp man` prints (go test
// ./cli -run TestManPageCurrent -update rewrites it), and names every
// flag of every command.
func TestManPageCurrent(t *testing.T) {
	page := manPage()
	if *update {
		if err := os.WriteFile(manFile, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shipped, err := os.ReadFile(manFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(shipped) != page {
		t.Errorf("%s is not what ringcp man prints: go test ./cli -run TestManPageCurrent -update", manFile)
	}
	r := cli(t, "man")
	r.want(t, exitOK)
	if r.stdout != page {
		t.Error("ringcp man does not print the page")
	}
	for _, c := range subcommands {
		for _, f := range visibleFlags(flagSetOf(c)) {
			if !strings.Contains(page, `\-\-`+roffEscape(f.Name)) {
				t.Errorf("the page lacks ringcp %s's --%s", c.name, f.Name)
			}
		}
	}
	for _, want := range []string{".SH \"EXIT STATUS\"", "128+N", ".SH EXAMPLES", "starts with SIGINT ignored"} {
		if !strings.Contains(page, roffEscape(want)) && !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestManPageRenders: groff reads the page without a warning.
func TestManPageRenders(t *testing.T) {
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff is not installed (Debian: groff-base)")
	}
	out, err := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", manFile).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("groff: %v\n%s", err, out)
	}
}
