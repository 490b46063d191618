package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// TestSplitWords: the list's words split as a POSIX shell splits them,
// with no expansion.
func TestSplitWords(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{"", nil},
		{"   \t ", nil},
		{"a b", []string{"a", "b"}},
		{"  a\t\tb  ", []string{"a", "b"}},
		{"'my disk.img' /dev/vdb", []string{"my disk.img", "/dev/vdb"}},
		{`"my disk.img" b`, []string{"my disk.img", "b"}},
		{`my\ disk.img b`, []string{"my disk.img", "b"}},
		{`'it'\''s' b`, []string{"it's", "b"}},
		{`"say \"hi\" \\ \$HOME \a" b`, []string{`say "hi" \ $HOME \a`, "b"}},
		{`'back\slash' b`, []string{`back\slash`, "b"}},
		{`a'b c'd e`, []string{"ab cd", "e"}},
		{`'' b`, []string{"", "b"}},
		{"$HOME ~/x *.img", []string{"$HOME", "~/x", "*.img"}},
		{"# a comment", nil},
		{"a b # the rest", []string{"a", "b"}},
		{"a#b c", []string{"a#b", "c"}},
		{`a '#b' \#c`, []string{"a", "#b", "#c"}},
		{"a b#", []string{"a", "b#"}},
	}
	for _, c := range cases {
		got, err := splitWords(c.line)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", c.line, got, err, c.want)
		}
	}
	for _, bad := range []string{`'open`, `"open`, `a b\`, `"a\"`} {
		if got, err := splitWords(bad); err == nil {
			t.Errorf("splitWords(%q) = %q: want an error", bad, got)
		}
	}
}

// TestQuoteWordRoundTrip: a path quoted for display reads back as itself.
func TestQuoteWordRoundTrip(t *testing.T) {
	for _, p := range []string{"plain/path.img", "my disk.img", "it's", `a"b`, `back\slash`, "", "#x", "tab\there", "-dash", "$HOME"} {
		got, err := splitWords(quoteWord(p))
		if err != nil || len(got) != 1 || got[0] != p {
			t.Errorf("quoteWord(%q) = %s reads back as %q (%v)", p, quoteWord(p), got, err)
		}
	}
	if quoteWord("/dev/vdb") != "/dev/vdb" {
		t.Errorf("quoteWord(/dev/vdb) = %s: want it plain", quoteWord("/dev/vdb"))
	}
}

// TestParseJobList: comments, blank lines, CRLF, range flags in either
// form and place, and -- before a path that starts with -.
func TestParseJobList(t *testing.T) {
	list := "\ufeff# VM 42's disks\r\n" +
		"\n" +
		"/img/root.img /dev/vdb\n" +
		"   'data disk.img' /dev/vdc --length 1M   # only the first MiB\r\n" +
		"--src-offset=4k a b --dst-offset 1Gi\n" +
		"-- -odd ./-dst\n"
	jobs, err := parseJobList(strings.NewReader(list), "list")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line                    int
		src, dst                string
		srcOff, dstOff, length  int64
		lengthSet, keepsDstSize bool
	}{
		{3, "/img/root.img", "/dev/vdb", 0, 0, 0, false, false},
		{4, "data disk.img", "/dev/vdc", 0, 0, 1 << 20, true, true},
		{5, "a", "b", 4096, 1 << 30, 0, false, true},
		{6, "-odd", "./-dst", 0, 0, 0, false, false},
	}
	if len(jobs) != len(want) {
		t.Fatalf("%d jobs, want %d", len(jobs), len(want))
	}
	for i, w := range want {
		j := jobs[i]
		o := j.options(copier.Options{BlockSize: 4096}, "")
		if j.line != w.line || o.Src != w.src || o.Dst != w.dst || o.SrcOffset != w.srcOff || o.DstOffset != w.dstOff ||
			o.Length != w.length || o.LengthSet != w.lengthSet || (o.DstSize == copier.SizeKeep) != w.keepsDstSize || o.BlockSize != 4096 {
			t.Errorf("job %d: line %d %+v; want %+v", i+1, j.line, o, w)
		}
	}
}

// TestJobStates: a line's --state is its job's state file; without one,
// a folder given with --jobs holds one named after the job's DST.
func TestJobStates(t *testing.T) {
	jobs, err := parseJobList(strings.NewReader("a /img/b --state '/s/my b.state'\nc /img/d\n"), "list")
	if err != nil {
		t.Fatal(err)
	}
	if got := jobs[0].options(copier.Options{}, "/states").StatePath; got != "/s/my b.state" {
		t.Errorf("job 1's state %q, want its line's", got)
	}
	if got, want := jobs[1].options(copier.Options{}, "/states").StatePath, copier.StateIn("/states", "/img/d"); got != want {
		t.Errorf("job 2's state %q, want %q", got, want)
	}
	if got := jobs[1].options(copier.Options{}, "").StatePath; got != "" {
		t.Errorf("job 2's state %q without a folder, want the default", got)
	}
	if _, err := parseJobList(strings.NewReader("a b --state ''\n"), "list"); err == nil || !strings.Contains(err.Error(), "--state needs a PATH") {
		t.Errorf("an empty --state: %v", err)
	}
}

// TestParseJobListErrors: each error names the list and the line.
func TestParseJobListErrors(t *testing.T) {
	cases := []struct{ list, want string }{
		{"a b\nc\n", "--jobs list line 2: want SRC DST, got 1 word(s)"},
		{"a b c\n", "line 1: want SRC DST, got 3 word(s)"},
		{"\n\n'a b\n", "line 3: a ' quote is not closed"},
		{"a \"b\n", "line 1: a \" quote is not closed"},
		{"a b\\\n", "line 1: a backslash ends the line"},
		{"a b --bs 4k\n", "line 1: unknown flag: --bs (a job line takes SRC DST and --src-offset, --dst-offset, --length, --state"},
		{"a b -q 4\n", "line 1: unknown shorthand flag: 'q'"},
		{"a b --help\n", "line 1: unknown flag: --help"},
		{"x y\na b --length 1x\n", "line 2: invalid argument \"1x\" for \"--length\""},
		{"a b --length 1M --length 2M\n", "line 1: invalid argument \"2M\" for \"--length\" flag: given twice"},
		{"# only comments\n\n", "--jobs list: no jobs"},
		{"", "--jobs list: no jobs"},
		{"'a\r' b\n", "line 1: 'a\r' holds the control character '\\r' at byte 1: not taken as a file name"},
		{"x y\n\"a\tb\" c\r\n", "line 2: 'a\tb' holds the control character '\\t'"},
		{"x y\n\ufeffa b\n", "line 2: '\ufeffa' holds the control character '\\ufeff' at byte 0"}, // a BOM only starts a list
		{"a b\x1b[0m\n", "holds the control character '\\x1b'"},
		{"a " + strings.Repeat("b", maxJobLine) + "\n", "line 1: bufio.Scanner: token too long"},
	}
	for _, c := range cases {
		_, err := parseJobList(strings.NewReader(c.list), "list")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("list %.40q: error %v; want %q", c.list, err, c.want)
		}
	}
}

// FuzzJobList: any list either parses or fails with one line naming the
// list (and the line, unless it holds no job); a path quoted by
// quoteWord reads back as itself.
func FuzzJobList(f *testing.F) {
	for _, s := range []string{"a b\n", "'a b' \"c d\" --length 1M\n# x\n", `a\ b c`, "a '\n", "--src-offset=4k a b --dst-offset 1G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		jobs, err := parseJobList(strings.NewReader(list), "list")
		switch {
		case err != nil:
			if msg := err.Error(); strings.ContainsAny(message(err), "\n\r") || !strings.HasPrefix(msg, "--jobs list") {
				t.Fatalf("%q: error %q", list, msg)
			}
		case len(jobs) == 0:
			t.Fatalf("%q: no jobs and no error", list)
		}
		if line := strings.SplitN(list, "\n", 2)[0]; !strings.ContainsRune(line, '\r') {
			got, err := splitWords(quoteWord(line))
			if err != nil || len(got) != 1 || got[0] != line {
				t.Fatalf("quoteWord(%q) = %s reads back as %q, %v", line, quoteWord(line), got, err)
			}
		}
	})
}
