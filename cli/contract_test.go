package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/schematest"
)

// contractCase is one command and outcome, run with --json: the object
// it prints must pass the schema, say the outcome and exit code the
// process exits with, and carry the error kind (on failure) and the
// fields listed.
type contractCase struct {
	name    string
	args    []string
	code    int
	command string
	kind    string         // error.kind; "" when complete
	fields  map[string]any // top-level fields and their values (numbers as float64)
}

// TestJSONContract runs every command with --json through its outcomes
// and checks each object against schema/ringcp-output.schema.json.
func TestJSONContract(t *testing.T) {
	fx := newFixture(t)
	s := schematest.Output(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	differs := filepath.Join(dir, "differs")
	randomFile(t, differs, 64<<10, 9)
	okList := write("ok.list", fx.Src+" "+filepath.Join(dir, "j1")+"\n"+fx.Src+" "+filepath.Join(dir, "j2")+" --length 4096\n")
	refusedList := write("refused.list", fx.Src+" "+filepath.Join(dir, "j3")+"\n"+filepath.Join(dir, "missing")+" "+filepath.Join(dir, "j4")+"\n")
	badList := write("bad.list", fx.Src+" "+filepath.Join(dir, "j5")+"\n\"open quote\n")
	missing := filepath.Join(dir, "missing")
	cases := []contractCase{
		{"copy complete", []string{"--json", fx.Src, fx.New}, exitOK, "copy", "",
			map[string]any{"length": float64(64 << 10), "bytes": float64(64 << 10), "dst_state": "complete"}},
		{"copy verified", []string{"--json", "--verify", "--checksum", fx.Src, filepath.Join(dir, "v1")}, exitOK, "copy", "", nil},
		{"copy resumable", []string{"--json", "--resume", fx.Src, filepath.Join(dir, "r1")}, exitOK, "copy", "", nil},
		{"copy refused", []string{"--json", missing, filepath.Join(dir, "c1")}, exitRefused, "copy", "not_found",
			map[string]any{"src": missing, "dst_state": "untouched"}},
		{"copy bad flag", []string{"--json", "-q", "0", fx.Src, filepath.Join(dir, "c2")}, exitRefused, "copy", "bad_input",
			map[string]any{"src": fx.Src, "dst": filepath.Join(dir, "c2")}},
		{"copy unknown flag", []string{"--json", "--nope", "--length", "5", fx.Src, filepath.Join(dir, "c3")}, exitRefused, "copy", "bad_input",
			map[string]any{"src": fx.Src, "dst": filepath.Join(dir, "c3")}},
		{"copy range refused", []string{"--json", "--length", "1M", fx.Src, filepath.Join(dir, "c4")}, exitRefused, "copy", "bad_input", nil},
		{"progress on stdout", []string{"--json", "--progress", "json", "--progress-fd", "1", fx.Src, filepath.Join(dir, "c5")}, exitRefused, "copy", "bad_input", nil},
		{"jobs complete", []string{"--json", "--jobs", okList}, exitOK, "jobs", "", nil},
		{"jobs refused", []string{"--json", "--jobs", refusedList}, exitRefused, "jobs", "not_found", nil},
		{"jobs list unparsable", []string{"--json", "--jobs", badList}, exitRefused, "jobs", "bad_input", nil},
		{"jobs list missing", []string{"--json", "--jobs", filepath.Join(dir, "no.list")}, exitRefused, "jobs", "bad_input", nil},
		{"jobs no list", []string{"--json", "--jobs"}, exitRefused, "jobs", "bad_input", nil},
		{"verify equal", []string{"verify", "--json", fx.Src, fx.New}, exitOK, "verify", "", map[string]any{"equal": true}},
		{"verify mismatch", []string{"verify", "--json", fx.Src, differs}, exitMismatch, "verify", "mismatch",
			map[string]any{"equal": false, "first_bad_offset": float64(0)}},
		{"verify refused", []string{"verify", "--json", fx.Src, missing}, exitRefused, "verify", "not_found", nil},
		{"verify one operand", []string{"verify", "--json", fx.Src}, exitRefused, "verify", "bad_input", map[string]any{"src": fx.Src}},
		{"checksum", []string{"checksum", "--json", fx.Src}, exitOK, "checksum", "", nil},
		{"checksum refused", []string{"checksum", "--json", missing}, exitRefused, "checksum", "not_found", nil},
		{"dd complete", []string{"dd", "--json", "if=" + fx.Src, "of=" + filepath.Join(dir, "d1"), "bs=4k"}, exitOK, "dd", "",
			map[string]any{"bytes": float64(64 << 10)}},
		{"dd refused", []string{"dd", "--json", "if=" + fx.Src, "of=" + filepath.Join(dir, "d2"), "conv=swab"}, exitRefused, "dd", "not_supported", nil},
		{"rate no copy", []string{"rate", "--json", "999999999"}, exitRefused, "rate", "bad_input", nil},
		{"rate usage", []string{"rate", "--json"}, exitRefused, "rate", "bad_input", nil},
		{"info", []string{"info", "--json", fx.Src}, exitOK, "info", "", map[string]any{"src": fx.Src}},
		{"info refused", []string{"info", "--json", missing}, exitRefused, "info", "not_found", map[string]any{"src": missing}},
		{"info usage", []string{"info", "--json"}, exitRefused, "info", "bad_input", nil},
		{"version", []string{"--version", "--json"}, exitOK, "version", "", nil},
		{"version bad flag", []string{"--version", "--json", "--nope"}, exitRefused, "version", "bad_input", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, c.args...)
			checkContract(t, s, c, r)
		})
	}
}

// checkContract checks one command's object.
func checkContract(t *testing.T, s *schematest.Schema, c contractCase, r result) map[string]any {
	t.Helper()
	if r.code != c.code {
		t.Errorf("exit %d, want %d; stderr:\n%s", r.code, c.code, r.stderr)
	}
	s.Check(t, []byte(r.stdout))
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	want := map[string]any{"command": c.command, "exit_code": float64(c.code), "outcome": outcome(codeErr(c.code))}
	for k, v := range c.fields {
		want[k] = v
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	e, _ := got["error"].(map[string]any)
	if kind, _ := e["kind"].(string); kind != c.kind {
		t.Errorf("error.kind %q, want %q", kind, c.kind)
	}
	if msg, _ := e["message"].(string); c.kind != "" && !strings.Contains(r.stderr, strings.SplitN(msg, "\n", 2)[0]) {
		t.Errorf("error.message %q is not what stderr says:\n%s", msg, r.stderr)
	}
	return got
}

// codeErr is an error exitCode maps to code, to name its outcome.
func codeErr(code int) error {
	switch code {
	case exitOK:
		return nil
	case exitRefused:
		return usagef("refused")
	case exitMismatch:
		return &mismatchError{}
	}
	return os.ErrInvalid
}

// TestJSONJobsNumbers: a batch's object has an exit code per job and a
// total with integers only, its rate the range's bytes over the time.
func TestJSONJobsNumbers(t *testing.T) {
	fx := newFixture(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "list")
	text := fx.Src + " " + filepath.Join(dir, "a") + "\n" + fx.Src + " " + filepath.Join(dir, "b") + " --length 4097\n"
	if err := os.WriteFile(list, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, "--json", "--jobs", list)
	r.want(t, exitOK)
	got := schematest.Output(t).Check(t, []byte(r.stdout))
	total, _ := got["total"].(map[string]any)
	if n, _ := total["length"].(json.Number); n.String() != "69633" { // 65536 + 4097
		t.Errorf("total.length %v, want 69633", total["length"])
	}
	for _, j := range got["jobs"].([]any) {
		job := j.(map[string]any)
		if c, _ := job["exit_code"].(json.Number); c.String() != "0" || job["outcome"] != "complete" {
			t.Errorf("job %v: exit_code %v outcome %v", job["job"], job["exit_code"], job["outcome"])
		}
	}
}

// TestJSONRefusedBatchNamesJobs: a refused batch says which job was
// refused and why; the others are not started. Before, --json printed
// nothing.
func TestJSONRefusedBatchNamesJobs(t *testing.T) {
	fx := newFixture(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "list")
	missing := filepath.Join(dir, "missing")
	if err := os.WriteFile(list, []byte(fx.Src+" "+filepath.Join(dir, "a")+"\n"+missing+" "+filepath.Join(dir, "b")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, "--json", "--jobs", list)
	r.want(t, exitRefused, "job 2 (line 2)")
	got := schematest.Output(t).Check(t, []byte(r.stdout))
	jobs, _ := got["jobs"].([]any)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs in the object, want 2:\n%s", len(jobs), r.stdout)
	}
	first, second := jobs[0].(map[string]any), jobs[1].(map[string]any)
	if first["outcome"] != "not_started" || second["outcome"] != "refused" || second["src"] != missing {
		t.Errorf("outcomes %v, %v (src %v), want not_started, refused (%s)", first["outcome"], second["outcome"], second["src"], missing)
	}
	if e, _ := second["error"].(map[string]any); e["kind"] != "not_found" || e["field"] != "Src" || e["errno"] != "ENOENT" {
		t.Errorf("job 2's error %v", second["error"])
	}
	for _, p := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created by a refused batch", p)
		}
	}
}

// TestJSONWhenDstIsStderr: a DST that is ringcp's stderr is refused, and
// the refusal's object is printed on stdout (before, no JSON at all);
// one that is stdout prints none, which would land in it.
func TestJSONWhenDstIsStderr(t *testing.T) {
	fx := newFixture(t)
	f, err := os.OpenFile(fx.Dst, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	code := Run([]string{"--json", fx.Src, fx.Dst}, &out, f)
	if code != exitRefused {
		t.Fatalf("exit %d, want %d", code, exitRefused)
	}
	got := schematest.Output(t).Check(t, out.Bytes())
	if e, _ := got["error"].(map[string]any); e["field"] != "Dst" || !strings.Contains(e["message"].(string), "own stderr") {
		t.Errorf("error %v, want DST named as ringcp's own stderr", got["error"])
	}
	var errOut bytes.Buffer
	before := readRange(t, fx.Dst, 0, 100_000)
	if code := Run([]string{"--json", fx.Src, fx.Dst}, f, &errOut); code != exitRefused {
		t.Fatalf("DST on stdout: exit %d, want %d", code, exitRefused)
	}
	if after := readRange(t, fx.Dst, 0, 100_000); !bytes.Equal(before, after) {
		t.Error("DST on stdout: the refusal wrote into DST")
	}
}

// TestJSONTooSmallCarriesLength: a block device too small for the copy
// is refused with the range's length and the bytes needed (before, the
// length was 0 and only the message had the need).
func TestJSONTooSmallCarriesLength(t *testing.T) {
	blocktest.NeedRoot(t)
	dev, _ := blocktest.Device(t, 1<<20)
	src := filepath.Join(t.TempDir(), "src")
	randomFile(t, src, 2<<20, 3)
	r := cli(t, "--json", "--dst-offset", "4096", src, dev)
	r.want(t, exitRefused, "too small")
	got := schematest.Output(t).Check(t, []byte(r.stdout))
	if n, _ := got["length"].(json.Number); n.String() != "2097152" {
		t.Errorf("length %v, want 2097152", got["length"])
	}
	e, _ := got["error"].(map[string]any)
	if n, _ := e["needed"].(json.Number); e["kind"] != "too_small" || n.String() != "2101248" {
		t.Errorf("error %v, want too_small needing 2101248 bytes", e)
	}
}
