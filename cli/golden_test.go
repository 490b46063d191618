package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/uringtest"
)

// The command's words, held in testdata/golden: help, the short usage, a
// summary, -v, refusals, --json, dd's lines. A change shows up as a diff
// in review; `go test -run TestGolden -update` rewrites the files from
// what the command prints now.
var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt from the current output")

// goldenCase is one command line; its output, normalised, is the file.
type goldenCase struct {
	name string
	args []string // {src} {dst} {new} {dir} are the fixture's
	out  string   // "stdout", "stderr" or "both"
}

var goldenCases = []goldenCase{
	{"help", []string{"--help"}, "stdout"},
	{"usage", nil, "stderr"},
	{"demo-help", []string{"demo", "--help"}, "stdout"},
	{"dd-help", []string{"dd", "--help"}, "stdout"},
	{"rate-help", []string{"rate", "--help"}, "stdout"},
	{"completion-help", []string{"completion", "--help"}, "stdout"},
	{"summary", []string{"--progress", "none", "{src}", "{new}"}, "both"},
	{"verbose", []string{"-v", "--progress", "none", "--engine", "uring", "{src}", "{new}"}, "both"},
	{"block-size-rounded", []string{"-b", "4MB", "--progress", "none", "{src}", "{new}"}, "stderr"},
	{"json-refused", []string{"--json", "{dir}/missing", "{new}"}, "both"},
	{"json-bad-flag", []string{"--json", "--sync", "maybe", "{src}", "{new}"}, "both"},
	{"json-bad-value", []string{"--json", "--engine", "spdk", "{src}", "{new}"}, "both"},
	{"refused-missing", []string{"{dir}/missing", "{new}"}, "stderr"},
	{"refused-directory", []string{"nbd://localhost/x", "{dir}"}, "stderr"},
	{"refused-range", []string{"--src-offset", "4096", "--length", "2M", "{src}", "{new}"}, "stderr"},
	{"refused-same", []string{"{src}", "{src}"}, "stderr"},
	{"refused-flag", []string{"--queue-depth", "0", "{src}", "{new}"}, "stderr"},
	{"dd", []string{"dd", "if={src}", "of={new}", "bs=4096", "count=10", "skip=1"}, "stderr"},
	{"dd-refused", []string{"dd", "if={src}", "of={new}", "conv=swab"}, "stderr"},
}

// TestGolden runs each case in-process and compares its output with the
// file in testdata/golden.
func TestGolden(t *testing.T) {
	uringtest.NeedOn(t)
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			randomFile(t, src, 1<<20+4097, 31)
			r := strings.NewReplacer("{src}", src, "{dst}", dst, "{new}", filepath.Join(dir, "new"), "{dir}", dir)
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = r.Replace(a)
			}
			res := cli(t, args...)
			got := fmt.Sprintf("$ ringcp %s\nexit %d\n", strings.Join(c.args, " "), res.code)
			switch c.out {
			case "stdout":
				got += res.stdout
			case "stderr":
				got += res.stderr
			default:
				got += "--- stdout\n" + res.stdout + "--- stderr\n" + res.stderr
			}
			compareGolden(t, c.name, normalise(got, dir))
		})
	}
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestGolden -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -run TestGolden -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// What changes from run to run: the temp folder, times, rates, the
// version of a build, and the good neighbour's -v line, which a copy
// has only once the controller took a sample (25 ms: a 1 MiB copy on a
// loaded machine, not on a quiet one).
var (
	reNeighbour = regexp.MustCompile(`(?m)^ringcp: good neighbour: in flight .*\n`)
	reSeconds   = regexp.MustCompile(`\b\d+(\.\d+)?(e-\d+)? s\b`)
	reRate      = regexp.MustCompile(`\b\d+(\.\d+)? [kMGT]?B/s\b`)
	reJSONNum   = regexp.MustCompile(`"(seconds|cpu_seconds|bytes_per_second)":[0-9.e+-]+`)
	reVersion   = regexp.MustCompile(`"version":"[^"]*"`)
)

func normalise(s, dir string) string {
	s = strings.ReplaceAll(s, dir, "$TMP")
	s = reNeighbour.ReplaceAllString(s, "")
	s = reRate.ReplaceAllString(s, "R B/s")
	s = reSeconds.ReplaceAllString(s, "T s")
	s = reJSONNum.ReplaceAllString(s, `"$1":N`)
	return reVersion.ReplaceAllString(s, `"version":"V"`)
}

// TestHelpSaysWhatItShould: examples, exit codes and where the JSON
// fields are documented; booleans without pflag's [=true|false].
func TestHelpSaysWhatItShould(t *testing.T) {
	r := cli(t, "--help")
	for _, want := range []string{"Examples:", "Exit codes:", "Machine-readable output", "ringcp dd if=", "--json  ", "130 SIGINT"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if strings.Contains(r.stdout, "[=") || r.code != exitOK {
		t.Errorf("exit %d; --help shows [=...] noise:\n%s", r.code, r.stdout)
	}
	if r := cli(t); r.code != exitRefused || !strings.HasPrefix(r.stderr, "Usage: ringcp") || r.stdout != "" || strings.Count(r.stderr, "\n") > 12 {
		t.Errorf("ringcp alone: exit %d, want 2 and a short usage on stderr:\n%s", r.code, r.stderr)
	}
	if r := cli(t, "demo", "--help"); r.code != exitOK || !strings.Contains(r.stdout, "--size SIZE") {
		t.Errorf("demo --help: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
