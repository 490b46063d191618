package cdi

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// MaxTermination is the kubelet's limit on a termination message: it
// keeps the last 4096 bytes of the file, so a longer JSON message would
// lose its start and no longer parse.
const MaxTermination = 4096

// CompleteMessage is CDI's message on success; CDI's tests compare the
// DataVolume's Running condition with it, so it is kept to the letter.
const CompleteMessage = "Import Complete"

// TerminationMessage is the JSON CDI's controller decodes after exit 0
// (pkg/common.TerminationMessage). Ringcp is ringcp's own, which CDI's
// decoder ignores.
type TerminationMessage struct {
	ScratchSpaceRequired *bool             `json:"scratchSpaceRequired,omitempty"`
	PreallocationApplied *bool             `json:"preallocationApplied,omitempty"`
	DeadlinePassed       *bool             `json:"deadlinePassed,omitempty"`
	Labels               map[string]string `json:"labels,omitempty"`
	Message              *string           `json:"message,omitempty"`
	Ringcp               *Details          `json:"ringcp,omitempty"`
}

// Details say what ringcp did, beside CDI's fields.
type Details struct {
	Version string `json:"version,omitempty"`
	Engine  string `json:"engine,omitempty"`
	Bytes   int64  `json:"bytes"`   // bytes written as data
	Size    int64  `json:"size"`    // DST's size
	Resumed bool   `json:"resumed"` // continued from an earlier container's state
	// Scratch is what the scratch space was used for: "unused", or
	// "resume state" (a block volume's).
	Scratch string `json:"scratch"`
}

// Outcome is how an import ended.
type Outcome struct {
	// Err is nil on success. A *Refusal or *ReadyTimeoutError is written
	// as its text, an error
	// wrapping ErrChecksumMismatch as CDI's JSON for it, any other error
	// as "Unable to process data: ERROR".
	Err                  error
	PreallocationApplied bool
	Details              *Details
}

// ExitZero tells whether the importer exits 0: on success, and on a
// checksum mismatch, which CDI's controller reads from the JSON only
// after exit 0 and fails for good (it is not retried).
func (o Outcome) ExitZero() bool {
	return o.Err == nil || errors.Is(o.Err, ErrChecksumMismatch)
}

// Text is the termination message for o: JSON after exit 0, one line of
// plain text otherwise, never more than MaxTermination bytes.
func (o Outcome) Text() string {
	var r *Refusal
	var ready *ReadyTimeoutError
	switch {
	case o.Err == nil:
		f := false
		msg := CompleteMessage
		return fitJSON(TerminationMessage{
			ScratchSpaceRequired: &f, PreallocationApplied: &o.PreallocationApplied,
			Message: &msg, Ringcp: o.Details,
		})
	case errors.Is(o.Err, ErrChecksumMismatch):
		msg := oneLine("Unable to process data: " + o.Err.Error())
		return fitJSON(TerminationMessage{Message: &msg, Ringcp: o.Details})
	case errors.As(o.Err, &r):
		return fitText(oneLine(r.Error()))
	case errors.As(o.Err, &ready):
		return fitText(oneLine(ready.Error()))
	default:
		return fitText(oneLine("Unable to process data: " + o.Err.Error()))
	}
}

// WriteOutcome writes o's message to path (the kubelet's
// terminationMessagePath) and makes it durable.
func WriteOutcome(path string, o Outcome) error {
	return WriteTermination(path, o.Text())
}

// WriteTermination replaces path's content with text and fsyncs it: a
// node that loses power after the importer exited must not leave the
// kubelet an empty message for a completed import. The file is written in
// place (the kubelet bind-mounts it; it cannot be renamed over).
func WriteTermination(path, text string) error {
	if len(text) > MaxTermination {
		return fmt.Errorf("termination message of %d bytes: the kubelet keeps %d", len(text), MaxTermination)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// oneLine puts a message on one line, as CDI's importer does: the
// kubelet's message is shown in one condition.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// fitText cuts s to MaxTermination bytes on a character boundary.
func fitText(s string) string {
	if len(s) <= MaxTermination {
		return s
	}
	return cutRunes(s, MaxTermination)
}

func cutRunes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// fitJSON marshals m within MaxTermination bytes: without ringcp's
// details if they do not fit, then with the message cut (JSON escapes can
// make a byte six, so the cut is searched for).
func fitJSON(m TerminationMessage) string {
	out := mustJSON(m)
	if len(out) <= MaxTermination {
		return out
	}
	m.Ringcp = nil
	if out = mustJSON(m); len(out) <= MaxTermination || m.Message == nil {
		return out
	}
	full := *m.Message
	lo, hi := 0, len(full) // the longest prefix that fits is in [lo, hi)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		cut := cutRunes(full, mid)
		m.Message = &cut
		if len(mustJSON(m)) <= MaxTermination {
			lo = mid
		} else {
			hi = mid
		}
	}
	cut := cutRunes(full, lo)
	m.Message = &cut
	return mustJSON(m)
}

// mustJSON marshals what cannot fail to marshal (strings, bools, ints).
func mustJSON(m TerminationMessage) string {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}
