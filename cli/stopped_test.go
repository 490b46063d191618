package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// What the command says when a copy stops: its error on one line
// (message, stopped.go) and what a rerun of a resumable copy keeps
// (resumableLine, trust_output.go).

// TestMessageJoined: the errors of an errors.Join are one line apart by
// "; ", also inside a wrapper and nested (issue 20: a literal "\n"
// between them); a newline in a path is still written \n.
func TestMessageJoined(t *testing.T) {
	a := errors.New("write /x at offset 4096: input/output error")
	b := errors.New("truncate /x to 0: read-only file system")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.Join(a, b), a.Error() + "; " + b.Error()},
		{fmt.Errorf("copy: %w", errors.Join(a, nil, b)), "copy: " + a.Error() + "; " + b.Error()},
		{errors.Join(a, errors.Join(b, a)), a.Error() + "; " + b.Error() + "; " + a.Error()},
		{fmt.Errorf("%w and %w", a, b), a.Error() + " and " + b.Error()},
		{errors.New("open /odd\nname: no such file"), `open /odd\nname: no such file`},
		{errors.Join(errors.New("open /odd\nname"), b), `open /odd\nname; ` + b.Error()},
	} {
		if got := message(tc.err); got != tc.want {
			t.Errorf("message(%q) = %q, want %q", tc.err.Error(), got, tc.want)
		}
	}
}

// TestResumableLine: a stopped resumable copy says how much a rerun
// keeps; with less than a 4 MiB block recorded, not "the first 0 bytes".
func TestResumableLine(t *testing.T) {
	got := resumableLine(copier.Report{ResumeFrom: 8 << 20, StatePath: "d.ringcp-state", PartialPath: "d.ringcp-partial"})
	if want := "is kept for --resume: d.ringcp-partial holds the first 8388608 bytes (8.00 MiB) of the copy, synced, as d.ringcp-state records; run the same command again to copy the rest"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got = resumableLine(copier.Report{StatePath: "d.ringcp-state"})
	if !strings.Contains(got, "is kept for --resume, with d.ringcp-state: not a whole 4 MiB block of the copy was recorded as synced yet") {
		t.Errorf("with nothing recorded: %s", got)
	}
}
