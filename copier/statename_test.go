package copier

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateIn: one state per DST, whatever way DST is spelled; two DSTs
// never share one; the name fits a file name.
func TestStateIn(t *testing.T) {
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	abs := filepath.Join(dir, "k2.img")
	if a, b := StateIn("/s", "k2.img"), StateIn("/s", abs); a != b {
		t.Errorf("k2.img and %s get %s and %s", abs, a, b)
	}
	if a, b := StateIn("/s", "/x/a_b/c"), StateIn("/s", "/x/a/b_c"); a == b {
		t.Errorf("two DSTs share %s", a)
	}
	long := "/" + strings.Repeat("é", 300) + "/" + strings.Repeat("d", 250)
	if name := filepath.Base(StateIn("/s", long)); len(name) > 255 || !strings.HasSuffix(name, ".ringcp-state") {
		t.Errorf("a long DST's state is named %q (%d bytes)", name, len(name))
	}
	if got := StateIn("/s", "nbd+unix:///disk?socket=/run/a.sock"); filepath.Dir(got) != "/s" {
		t.Errorf("an export's state %s is not in the folder", got)
	}
	os.Mkdir("sub", 0o755)
	os.Symlink("sub", "link")
	if a, b := StateIn("/s", "sub/x"), StateIn("/s", "link/x"); a != b {
		t.Errorf("sub/x and link/x (the same file) get %s and %s", a, b)
	}
}
