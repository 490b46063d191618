package main

import "testing"

// TestCurrentScheduler: the bracketed name is the scheduler in use.
func TestCurrentScheduler(t *testing.T) {
	for text, want := range map[string]string{
		"none [mq-deadline] kyber bfq\n": "mq-deadline",
		"[none] mq-deadline\n":           "none",
		"none\n":                         "",
	} {
		if got, _ := currentScheduler(text); got != want {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}
