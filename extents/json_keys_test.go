package extents

import (
	"errors"
	"strings"
	"testing"
)

// A JSON element names each key once, spelt exactly: encoding/json keeps
// the last of duplicate keys and matches keys whatever their case, so
// {"offset": 0, "offset": 4096, ...} and {"OFFSET": ...} were read as a
// range the list's writer may not have meant (another reader takes the
// first duplicate), with no error.
func TestParseJSONKeysExact(t *testing.T) {
	for _, c := range []struct{ name, in, err string }{
		{"duplicate offset", `[{"offset": 0, "offset": 4096, "length": 1}]`, `element 1 (line 1): "offset" given twice`},
		{"duplicate length", "[{\"offset\": 0, \"length\": 1},\n{\"offset\": 0, \"length\": 1, \"length\": 9}]", `element 2 (line 2): "length" given twice`},
		{"capitalised", `[{"Offset": 0, "length": 1}]`, `unknown field "Offset"`},
		{"case twin", `[{"offset": 0, "OFFSET": 4096, "length": 1}]`, `unknown field "OFFSET"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(c.in))
			var se *SyntaxError
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &se) {
				t.Fatalf("got %v, %v; want a *SyntaxError with %q", got, err, c.err)
			}
		})
	}
}
