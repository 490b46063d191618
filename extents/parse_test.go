package extents

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// e is an Entry of a text list.
func e(off, n int64, line int) Entry { return Entry{Range: Range{off, n}, Line: line} }

// j is an Entry of a JSON list.
func j(off, n int64, line, elem int) Entry {
	return Entry{Range: Range{off, n}, Line: line, Element: elem}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []Entry
		err      string // a substring of the error; "" for none
	}{
		{"empty", "", nil, ""},
		{"blank lines only", "\n \n\t\n", nil, ""},
		{"one", "0 4096\n", []Entry{e(0, 4096, 1)}, ""},
		{"no final newline", "512 1", []Entry{e(512, 1, 1)}, ""},
		{"comments and blanks", "# changed blocks\n\n4096 512  # one sector\n  \t8192\t4096\n#end", []Entry{e(4096, 512, 3), e(8192, 4096, 4)}, ""},
		{"leading blank lines count", "\n\n7 1\n", []Entry{e(7, 1, 3)}, ""},
		{"crlf", "1 2\r\n3 4\r\n", []Entry{e(1, 2, 1), e(3, 4, 2)}, ""},
		{"unsorted overlapping kept as read", "100 10\n0 200\n", []Entry{e(100, 10, 1), e(0, 200, 2)}, ""},
		{"zero length", "5 0\n", []Entry{e(5, 0, 1)}, ""},
		{"leading zeros", "0010 007\n", []Entry{e(10, 7, 1)}, ""},
		{"largest", "0 9223372036854775807\n", []Entry{e(0, 1<<63-1, 1)}, ""},
		{"one field", "0 1\n4096\n", nil, "line 2: 1 fields, want two"},
		{"three fields", "0 1 data\n", nil, "line 1: 3 fields"},
		{"suffix", "0 4K\n", nil, `line 1: length "4K": want a decimal number`},
		{"hex", "0x1000 1\n", nil, `offset "0x1000"`},
		{"negative", "-1 1\n", nil, `offset "-1"`},
		{"plus", "+1 1\n", nil, `offset "+1"`},
		{"comma", "1,2\n", nil, "1 fields"},
		{"too big", "9223372036854775808 1\n", nil, "does not fit in 63 bits"},
		{"overflow", "9223372036854775807 1\n", nil, "line 1: offset 9223372036854775807 + length 1 overflows"},
		{"long line", "0 1\n" + strings.Repeat(" ", MaxLine+1) + "\n", nil, "line 2: longer than 4096 bytes"},
		{"json", `[{"offset": 0, "length": 4096}, {"length": 1, "offset": 512}]`, []Entry{j(0, 4096, 1, 1), j(512, 1, 1, 2)}, ""},
		{"json lines", "\n[\n  {\"offset\": 1, \"length\": 2},\n\n  {\"offset\": 3,\n   \"length\": 4}\n]\n", []Entry{j(1, 2, 3, 1), j(3, 4, 5, 2)}, ""},
		{"json empty", " [ ] ", nil, ""},
		{"json missing length", `[{"offset": 1}]`, nil, `element 1 (line 1): no "length"`},
		{"json missing offset", "[{\"offset\":1,\"length\":1},\n{\"length\": 1}]", nil, `element 2 (line 2): no "offset"`},
		{"json unknown key", `[{"offset": 1, "length": 1, "start": 0}]`, nil, `unknown field "start"`},
		{"json fraction", `[{"offset": 1.5, "length": 1}]`, nil, `"offset" must be a whole number`},
		{"json exponent", `[{"offset": 1e3, "length": 1}]`, nil, `"offset" must be a whole number`},
		{"json string", `[{"offset": "1", "length": 1}]`, nil, `"offset" must be a whole number`},
		{"json negative", `[{"offset": 0, "length": -1}]`, nil, "negative"},
		{"json too big", `[{"offset": 0, "length": 9223372036854775808}]`, nil, `"length" must be a whole number`},
		{"json overflow", `[{"offset": 9223372036854775807, "length": 1}]`, nil, "overflows"},
		{"json not objects", `[1, 2]`, nil, "want an object"},
		{"json null", `[null]`, nil, `no "offset"`},
		{"json unclosed", `[{"offset": 0, "length": 1}`, nil, "not closed"},
		{"json trailing", `[] []`, nil, "more after the array"},
		{"json object", "\n{\"offset\": 0, \"length\": 1}", nil, "line 2: a JSON list is an array"},
		{"longer line", "0 1\n" + strings.Repeat(" ", 3*MaxLine) + "\n", nil, "line 2: longer than 4096 bytes"},
		{"longest line", "0 1" + strings.Repeat(" ", MaxLine-3) + "\r\n", []Entry{e(0, 1, 1)}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(c.in))
			if c.err != "" {
				var se *SyntaxError
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &se) {
					t.Fatalf("got %v, %v; want a *SyntaxError with %q", got, err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestRead(t *testing.T) {
	const list = "# unsorted, overlapping, adjacent\n8192 4096\n0 4096\n4096 10\n12000 500\n100 0\n"
	got, err := Read(strings.NewReader(list), 1<<20, 13000)
	if err != nil {
		t.Fatal(err)
	}
	if want := (List{{0, 4106}, {8192, 12500 - 8192}}); !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	for _, c := range []struct {
		src, dst int64
		want     string
	}{
		{1 << 20, 12499, "line 5: range 12000+500 ends at 12500, past the end of DST (12499 bytes)"},
		{12288, 1 << 20, "line 5: range 12000+500 ends at 12500, past the end of SRC (12288 bytes)"},
		{5000, 1 << 20, "line 2: range 8192+4096 ends at 12288, past the end of SRC (5000 bytes)"},
	} {
		_, err := Read(strings.NewReader(list), c.src, c.dst)
		var re *RangeError
		if !errors.As(err, &re) || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("sizes %d/%d: got %v, want %q", c.src, c.dst, err, c.want)
		}
	}
	// An empty range still names an offset that must exist.
	if _, err := Read(strings.NewReader("5000 0\n"), 4096, 8192); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("empty range past SRC: %v", err)
	}
	// JSON is named by element and line.
	_, err = Read(strings.NewReader("[\n{\"offset\":0,\"length\":1},\n{\"offset\":10,\"length\":1}\n]"), 10, 100)
	if err == nil || !strings.Contains(err.Error(), "element 2 (line 3)") {
		t.Errorf("json past SRC: %v", err)
	}
	// A negative size leaves that end unchecked.
	if _, err := Read(strings.NewReader("0 100\n"), 100, -1); err != nil {
		t.Errorf("unknown DST size: %v", err)
	}
}
