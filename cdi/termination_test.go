package cdi

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// cdiMessage is the termination message as CDI's controller decodes it
// (its documented fields; encoding/json ignores the others).
type cdiMessage struct {
	ScratchSpaceRequired *bool             `json:"scratchSpaceRequired"`
	PreallocationApplied *bool             `json:"preallocationApplied"`
	DeadlinePassed       *bool             `json:"deadlinePassed"`
	VddkInfo             *struct{}         `json:"vddkInfo"`
	Labels               map[string]string `json:"labels"`
	Message              *string           `json:"message"`
}

// parseAsController does what the controller does after exit 0: decode
// the file's text as JSON, or fail.
func parseAsController(t *testing.T, text string) cdiMessage {
	t.Helper()
	var m cdiMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("the controller cannot decode %q: %v", text, err)
	}
	return m
}

func TestTerminationSuccess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "termination-log")
	// What an earlier container left is replaced, not overwritten in part.
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Outcome{PreallocationApplied: true, Details: &Details{Version: "v1", Bytes: 3, Size: 1 << 30, Scratch: "unused"}}
	if !o.ExitZero() {
		t.Error("success does not exit 0")
	}
	if err := WriteOutcome(path, o); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := parseAsController(t, string(raw))
	if m.Message == nil || *m.Message != "Import Complete" {
		t.Errorf("message %v, want CDI's Import Complete", m.Message)
	}
	if m.ScratchSpaceRequired == nil || *m.ScratchSpaceRequired || m.PreallocationApplied == nil || !*m.PreallocationApplied {
		t.Errorf("scratch %v prealloc %v, want false and true", m.ScratchSpaceRequired, m.PreallocationApplied)
	}
	var ours struct{ Ringcp Details }
	if err := json.Unmarshal(raw, &ours); err != nil || ours.Ringcp.Scratch != "unused" || ours.Ringcp.Size != 1<<30 {
		t.Errorf("ringcp's details: %+v, %v", ours.Ringcp, err)
	}
}

// TestTerminationFailures: a failure is one line of text that is not
// JSON (the controller reads it only as text after a non-zero exit); a
// checksum mismatch is JSON after exit 0 with CDI's words.
func TestTerminationFailures(t *testing.T) {
	tooBig := &Refusal{Name: "image", Reason: "virtual image size 20 is larger than the reported available storage 10. A larger PVC is required"}
	cases := []struct {
		err      error
		exitZero bool
		want     string
	}{
		{errors.New("read https://x/y at offset 4096: connection reset\nby peer"), false, "Unable to process data: read https://x/y at offset 4096: connection reset by peer"},
		{tooBig, false, "image virtual image size 20 is larger than the reported available storage 10. A larger PVC is required"},
		{&ReadyTimeoutError{Path: "/shared/ready"}, false, "Timeout waiting for file /shared/ready"},
		{fmt.Errorf("%w: expected sha256:aa, calculated sha256:bb", ErrChecksumMismatch), true, ""},
	}
	for _, tc := range cases {
		o := Outcome{Err: tc.err}
		if o.ExitZero() != tc.exitZero {
			t.Errorf("%v: exit zero %v", tc.err, o.ExitZero())
		}
		text := o.Text()
		if !tc.exitZero {
			if text != tc.want {
				t.Errorf("got  %q\nwant %q", text, tc.want)
			}
			continue
		}
		m := parseAsController(t, text)
		if m.Message == nil || !strings.Contains(*m.Message, "checksum mismatch") || !strings.HasPrefix(*m.Message, "Unable to process data: ") {
			t.Errorf("checksum mismatch message %v", m.Message)
		}
	}
	if !strings.Contains(Outcome{Err: tooBig}.Text(), "is larger than the reported available") {
		t.Error("too small a volume is not worded as CDI's controller recognizes it")
	}
}

// TestTerminationLimit: whatever the error, the message fits the
// kubelet's 4096 bytes, is valid UTF-8, and a JSON one still parses and
// keeps its start.
func TestTerminationLimit(t *testing.T) {
	long := strings.Repeat("é<>&\"\\\x01 ", 2000) // escapes that grow in JSON, two-byte runes
	for _, err := range []error{
		errors.New(long),
		&Refusal{Name: "x", Reason: long},
		fmt.Errorf("%w: %s", ErrChecksumMismatch, long),
	} {
		o := Outcome{Err: err, Details: &Details{Scratch: strings.Repeat("d", 5000)}}
		text := o.Text()
		if len(text) > MaxTermination || !utf8.ValidString(text) {
			t.Errorf("%d bytes (valid UTF-8 %v)", len(text), utf8.ValidString(text))
		}
		if o.ExitZero() {
			m := parseAsController(t, text)
			if !strings.HasPrefix(*m.Message, "Unable to process data: checksum mismatch: é<>") {
				t.Errorf("cut message starts %q", (*m.Message)[:40])
			}
			if len(text) < MaxTermination-12 {
				t.Errorf("cut to %d bytes: more could have been kept", len(text))
			}
		}
		path := filepath.Join(t.TempDir(), "log")
		if err := WriteOutcome(path, o); err != nil {
			t.Fatal(err)
		}
		if raw, _ := os.ReadFile(path); string(raw) != text {
			t.Errorf("file holds %d bytes, not the message's %d", len(raw), len(text))
		}
	}
	// Success too, with details that cannot fit: they go, CDI's fields stay.
	text := Outcome{Details: &Details{Scratch: strings.Repeat("d", 5000)}}.Text()
	if m := parseAsController(t, text); len(text) > MaxTermination || *m.Message != CompleteMessage {
		t.Errorf("success with huge details: %d bytes", len(text))
	}
	if err := WriteTermination(filepath.Join(t.TempDir(), "log"), strings.Repeat("x", MaxTermination+1)); err == nil {
		t.Error("a message the kubelet would cut was written")
	}
}

func TestTerminationUnwritable(t *testing.T) {
	if err := WriteOutcome(filepath.Join(t.TempDir(), "missing", "log"), Outcome{}); err == nil {
		t.Error("no error for a termination log that cannot be created")
	}
}
