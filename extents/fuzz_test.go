package extents

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse. Whatever comes, it must not
// panic; what it accepts must be well formed (non-negative, no
// overflow, lines in order), merge to a valid List covering every entry,
// and read back the same when written out again as text. The seeds run
// in every go test.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "0 1\n", "# c\n\n10 20 # x\r\n5 5\n", "0 9223372036854775807", "1 2 3", "-1 0", "4K 1",
		`[{"offset":1,"length":2}]`, "\n[\n{\"offset\":0,\"length\":0},{\"length\":5,\"offset\":9}]", `[{"offset":1}]`, `[1]`, `[`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		entries, err := Parse(bytes.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "extent list") {
				t.Fatalf("error %q does not say what it is about", err)
			}
			return
		}
		line := 0
		for _, e := range entries {
			if e.Off < 0 || e.Len < 0 || e.End() < e.Off || e.Line < line || e.Line < 1 {
				t.Fatalf("accepted %+v", e)
			}
			line = e.Line
		}
		l := Merge(Ranges(entries))
		if err := l.Valid(); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Len > 0 && (!l.Contains(e.Off) || !l.Contains(e.End()-1)) {
				t.Fatalf("%v lost %+v", l, e)
			}
		}
		var text strings.Builder
		for _, r := range l {
			fmt.Fprintf(&text, "%d %d\n", r.Off, r.Len)
		}
		again, err := Parse(strings.NewReader(text.String()))
		if err != nil || !slices.Equal(Merge(Ranges(again)), l) {
			t.Fatalf("%v written as text read back as %v, %v", l, again, err)
		}
	})
}
