package copier

import "testing"

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"/a/b.img": "/a/b.img", "my disk.img": "'my disk.img'", "it's": `'it'\''s'`, "": "''"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
