package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestDemo runs the built-in demo at a small size: both engines copy, and
// both copies are verified byte for byte.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run([]string{"demo", "--size", "8M", "--dir", t.TempDir()}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if strings.Count(out, "verified byte for byte") != 2 || !strings.Contains(out, "pool copy") {
		t.Fatalf("demo output lacks two verified copies:\n%s", out)
	}
}
