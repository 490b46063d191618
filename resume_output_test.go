package main

import (
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

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
