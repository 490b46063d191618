package main

import (
	"errors"
	"fmt"
	"testing"
)

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
