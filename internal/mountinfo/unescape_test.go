package mountinfo

import "testing"

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`: "/a b", `tab\011`: "tab\t", `back\134slash`: `back\slash`,
		`short\04`: `short\04`, `not\999`: `not\999`, `plain`: "plain", `end\`: `end\`,
		`/tmp/not\999octal\1`: `/tmp/not\999octal\1`, `/a\040b\134c\011d\x`: "/a b\\c\td\\x",
		`over\777byte`: `over\777byte`,
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}
