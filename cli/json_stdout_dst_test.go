package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/schematest"
)

// The --json object never goes into the copy and is never lost: when
// stdout carries the copy (DST -, dd without of=, a DST that is the file
// stdout writes to) it goes to stderr, on a line of its own, for every
// outcome.

// lastJSONLine is the last line of stderr that holds an object: dd's
// records lines come before it.
func lastJSONLine(t *testing.T, stderr string) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "{") {
			return []byte(lines[i])
		}
	}
	t.Fatalf("no JSON object on stderr:\n%s", stderr)
	return nil
}

// TestJSONDDBadOperandWithoutOf: dd without of= writes the copy to
// stdout, so an operand refused before the copy puts its object on
// stderr, naming DST -. Before, the object went to stdout, into the
// data a pipe's reader takes, with dst "".
func TestJSONDDBadOperandWithoutOf(t *testing.T) {
	fx := newFixture(t)
	s := schematest.Output(t)
	for _, args := range [][]string{
		{"dd", "--json", "if=" + fx.Src, "bs=0"},
		{"dd", "--json", "if=" + fx.Src, "count=x"},
		{"dd", "--json", "if=" + fx.Src, "conv=swab"},
	} {
		r := cli(t, args...)
		if r.code != exitRefused || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q; want %d and nothing on stdout", args, r.code, r.stdout, exitRefused)
			continue
		}
		got := s.Check(t, lastJSONLine(t, r.stderr))
		if got["dst"] != "-" || got["src"] != fx.Src || got["outcome"] != "refused" {
			t.Errorf("%v: src %v dst %v outcome %v", args, got["src"], got["dst"], got["outcome"])
		}
	}
	// of= after the bad operand is still DST: the object goes to stdout.
	dst := filepath.Join(t.TempDir(), "d")
	r := cli(t, "dd", "--json", "bs=0", "if="+fx.Src, "of="+dst)
	r.want(t, exitRefused)
	if got := s.Check(t, []byte(r.stdout)); got["dst"] != dst || got["src"] != fx.Src {
		t.Errorf("bad operand first: src %v dst %v, want %s and %s", got["src"], got["dst"], fx.Src, dst)
	}
}

// stdoutFile opens path as a command's stdout would be (> path).
func stdoutFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestJSONDstIsOwnStdout: a DST that is the file stdout writes to
// (`ringcp --json SRC /dev/stdout > f`) is refused, and the refusal's
// object goes to stderr, as for DST -. Before, no object was printed
// anywhere. dd copies into it, as dd does, and its object goes to stderr
// too (before: none, though the copy completed).
func TestJSONDstIsOwnStdout(t *testing.T) {
	fx := newFixture(t)
	s := schematest.Output(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "list")
	if err := os.WriteFile(list, []byte(fx.Src+" "+fx.Dst+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		args    []string
		code    int
		command string
	}{
		{"copy", []string{"--json", fx.Src, fx.Dst}, exitRefused, "copy"},
		{"sync", []string{"sync", "--json", fx.Src, fx.Dst}, exitRefused, "sync"},
		{"jobs", []string{"--json", "--jobs", list}, exitRefused, "jobs"},
		{"dd", []string{"dd", "--json", "if=" + fx.Src, "of=" + fx.Dst}, exitOK, "dd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := readAll(t, fx.Dst)
			var errOut bytes.Buffer
			code := Run(c.args, stdoutFile(t, fx.Dst), &errOut)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, errOut.String())
			}
			got := s.Check(t, lastJSONLine(t, errOut.String()))
			if got["command"] != c.command || got["outcome"] != outcome(codeErr(c.code)) {
				t.Errorf("command %v outcome %v\n%s", got["command"], got["outcome"], errOut.String())
			}
			after := readAll(t, fx.Dst)
			if c.code == exitRefused && !bytes.Equal(before, after) {
				t.Error("the refusal wrote into DST")
			}
			if c.code == exitOK && bytes.Contains(after, []byte(`"schema"`)) {
				t.Error("the object landed in DST")
			}
		})
	}
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
