package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// jsonFields are the --json object's fields. They are an interface:
// fields are added, never renamed or removed (schema 2 renamed the times
// to integer milliseconds and moved the error's fields into "error"). A
// name missing here is a rename; add new ones at the end.
var jsonFields = []string{
	"src", "dst", "engine", "fallback_reason", "bytes", "bytes_read", "milliseconds", "bytes_per_second",
	"cpu_milliseconds", "block_size", "queue_depth", "direct_src", "direct_dst", "bytes_holes", "bytes_zeroed",
	"offload", "offload_fallback", "synced", "dst_state", "contiguous", "fixed_buffers", "engine_detail",
	// issue 12
	"schema", "version", "outcome", "exit_code", "src_offset", "dst_offset", "length",
	// issue 13
	"max_rate", "ioprio", "io_limits", "yield",
	// issue 22
	"command", "data_bytes_per_second",
	// issue 27
	"neighbour",
}

// jsonOf runs the command and decodes the one object it prints on stdout.
func jsonOf(t *testing.T, args ...string) (map[string]any, result) {
	t.Helper()
	r := cli(t, args...)
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var got map[string]any
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one object:\n%s", r.stdout)
	}
	for _, k := range jsonFields {
		if _, ok := got[k]; !ok {
			t.Errorf("--json lacks %q", k)
		}
	}
	return got, r
}

// TestJSONEveryOutcome: --json prints one object for a refusal too, with
// the kind a program switches on, the field and flag at fault, the errno,
// and the exit code the command exits with; stderr still has its line.
func TestJSONEveryOutcome(t *testing.T) {
	fx := newFixture(t)
	cases := []struct {
		args                []string
		kind, field, errno  string
		flag, errorContains string
	}{
		{[]string{"--json", filepath.Join(fx.Dir, "missing"), fx.New}, "not_found", "Src", "ENOENT", "", "no such file or device"},
		{[]string{"--json", "--src-offset", "1M", fx.Src, fx.New}, "bad_input", "SrcOffset", "", "--src-offset", "--src-offset 1048576 is past the end"},
		{[]string{"--json", fx.Src, fx.Src}, "overlap", "Dst", "", "", "SRC and DST are the same file"},
		{[]string{"--json", "-q", "0", fx.Src, fx.New}, "bad_input", "QueueDepth", "", "--queue-depth", `"-q, --queue-depth" flag: must be more than 0`},
		{[]string{"--json", "-q", "2000", fx.Src, fx.New}, "bad_input", "QueueDepth", "", "--queue-depth", "--queue-depth 2000: out of range (1 to 1024)"},
		{[]string{"--json", "nbd://localhost/x", fx.Sub}, "bad_input", "Dst", "EISDIR", "", "DST is a directory"},
		{[]string{"--json", fx.Sub, fx.New}, "not_supported", "Src", "EISDIR", "", "is a directory"},
		// A name that does not resolve is no EIO (.invalid never resolves: RFC 2606).
		{[]string{"--json", "nbd://no-such-host.invalid/x", fx.New}, "not_found", "Src", "", "", "cannot resolve the host name no-such-host.invalid"},
	}
	for _, c := range cases {
		got, r := jsonOf(t, c.args...)
		r.want(t, exitRefused, c.errorContains)
		want := map[string]any{"outcome": "refused", "exit_code": float64(exitRefused),
			"dst_state": "untouched", "schema": float64(jsonSchema)}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%q: %s = %v, want %v", c.args, k, got[k], v)
			}
		}
		errObj, _ := got["error"].(map[string]any)
		for k, v := range map[string]string{"kind": c.kind, "field": c.field, "errno": c.errno, "flag": c.flag} {
			if s, _ := errObj[k].(string); s != v {
				t.Errorf("%q: error.%s = %q, want %q", c.args, k, s, v)
			}
		}
		if e, _ := errObj["message"].(string); !strings.Contains(e, c.errorContains) || !strings.Contains(r.stderr, e) {
			t.Errorf("%q: error %q: want it to say %q, as stderr does:\n%s", c.args, e, c.errorContains, r.stderr)
		}
		fx.Unchanged(t)
	}
}

// TestJSONComplete: a complete copy's object carries the range and the
// schema, and its times and rates are integers.
func TestJSONComplete(t *testing.T) {
	fx := newFixture(t)
	got, r := jsonOf(t, "--json", "--src-offset", "4096", "--length", "8192", fx.Src, fx.New)
	r.want(t, exitOK)
	want := map[string]any{"outcome": "complete", "exit_code": float64(0), "length": float64(8192),
		"src_offset": float64(4096), "dst_offset": float64(0), "bytes": float64(8192), "schema": float64(jsonSchema)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for _, k := range []string{"milliseconds", "cpu_milliseconds", "bytes_per_second", "data_bytes_per_second"} {
		raw := strings.Split(strings.Split(r.stdout, `"`+k+`":`)[1], ",")[0]
		if strings.ContainsAny(raw, ".eE") {
			t.Errorf("%s = %s: not an integer", k, raw)
		}
	}
	if v, _ := got["version"].(string); v == "" {
		t.Error("version is empty")
	}
	if !bytes.Equal(readRange(t, fx.New, 0, 8192), readRange(t, fx.Src, 4096, 8192)) {
		t.Error("DST differs from SRC's range")
	}
}

// TestJSONFieldsDocumented: every field the object has is in jsonFields
// or among those only a refusal or failure carries, so a new field cannot
// go in without being listed (and documented in the README).
func TestJSONFieldsDocumented(t *testing.T) {
	fx := newFixture(t)
	got, _ := jsonOf(t, "--json", filepath.Join(fx.Dir, "missing"), fx.New)
	extra := []string{"error"}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for k := range got {
		if !slices.Contains(jsonFields, k) && !slices.Contains(extra, k) {
			t.Errorf("--json has %q, which jsonFields does not list", k)
		}
		if !bytes.Contains(readme, []byte("`"+k+"`")) {
			t.Errorf("--json has %q, which the README does not name", k)
		}
	}
	if _, err := os.Stat(fx.New); err == nil {
		t.Error("a refused copy created DST")
	}
}
