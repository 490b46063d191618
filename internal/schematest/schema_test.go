package schematest

import (
	"strings"
	"testing"
)

// TestRejects: the checker turns down what the output schema forbids, so
// a test that passes an object through it can fail.
func TestRejects(t *testing.T) {
	s := Output(t)
	good := `{"schema":2,"version":"v1","command":"rate","outcome":"complete","exit_code":0,"pid":7,"max_rate":0}`
	if _, err := s.Validate([]byte(good)); err != nil {
		t.Fatalf("a good object refused: %v", err)
	}
	for _, c := range []struct{ doc, why string }{
		{strings.Replace(good, `"pid":7`, `"pid":7.5`, 1), "not of type"},
		{strings.Replace(good, `"pid":7`, `"pid":"7"`, 1), "not of type"},
		{strings.Replace(good, `"schema":2`, `"schema":1`, 1), "want 2"},
		{strings.Replace(good, `,"max_rate":0`, ``, 1), `lacks "max_rate"`},
		{strings.Replace(good, `"max_rate":0`, `"max_rate":0,"extra":1`, 1), "not in the schema"},
		{strings.Replace(good, `"outcome":"complete"`, `"outcome":"refused"`, 1), `lacks "error"`},
		{strings.Replace(good, `"command":"rate"`, `"command":"cp"`, 1), "is not one of"},
		{strings.Replace(good, `"exit_code":0`, `"exit_code":-1`, 1), "less than"},
		{good + good, "more than one"},
		{`{"schema":2,"version":"v1","command":"rate","outcome":"refused","exit_code":2,"error":{"kind":"nope","field":"","flag":"","message":"m","errno":"","path":""},"pid":0,"max_rate":-1}`, "is not one of"},
	} {
		_, err := s.Validate([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: got %v, want an error saying %q", c.doc, err, c.why)
		}
	}
}
