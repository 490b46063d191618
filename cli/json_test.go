package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/internal/schematest"
	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestJSONReport runs the real CLI entry point with --json and checks every
// field the issue promises integrations, with values that match the copy.
func TestJSONReport(t *testing.T) {
	uringtest.NeedOn(t)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := bytes.Repeat([]byte("ringcp\x00"), 300_001) // 2100007 bytes, an odd tail
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, engine := range []string{"uring", "pool"} {
		var stdout, stderr bytes.Buffer
		code := Run([]string{"--json", "--engine", engine, src, dst}, &stdout, &stderr)
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr %q", engine, code, stderr.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("%s: --json wrote to stderr: %q", engine, stderr.String())
		}
		var got map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("%s: stdout is not one JSON object: %v\n%s", engine, err, stdout.String())
		}
		want := map[string]any{
			"engine": map[string]string{"uring": "io_uring", "pool": "pool"}[engine], "fallback_reason": "",
			"bytes": float64(len(data)), "direct_src": true, "direct_dst": true, "synced": true, "dst_state": "complete",
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", engine, k, got[k], v)
			}
		}
		schematest.Output(t).Check(t, stdout.Bytes())
		for _, k := range []string{"milliseconds", "bytes_per_second", "data_bytes_per_second", "cpu_milliseconds", "block_size", "queue_depth"} {
			if v, ok := got[k].(float64); !ok || v < 0 || (k != "cpu_milliseconds" && k != "milliseconds" && v == 0) {
				t.Errorf("%s: %s = %v, want a positive number", engine, k, got[k])
			}
		}
		out, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("%s: DST differs from SRC (%v)", engine, err)
		}
	}
}

// TestSummaryLine: without --json, one human line on stderr, nothing on
// stdout.
func TestSummaryLine(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Run([]string{"--progress", "none", src, filepath.Join(dir, "dst")}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	line := stderr.String()
	if stdout.Len() != 0 || strings.Count(line, "\n") != 1 || !strings.Contains(line, "copied 5 B") || !strings.Contains(line, "engine ") {
		t.Fatalf("stdout %q, stderr %q: want one summary line on stderr", stdout.String(), line)
	}
}

func TestVerboseExplainsChoices(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, make([]byte, 10000), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Run([]string{"-v", "--progress", "none", src, filepath.Join(dir, "dst")}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// 10000 bytes are no multiple of any O_DIRECT alignment: the tail is
	// written buffered, and -v says so; the new DST's creation is named.
	wants := []string{"O_DIRECT, alignment", "block size", "queue depth", "engine ",
		"bytes (the length is not a multiple of", "are written buffered", "new DST is an unnamed O_TMPFILE inode"}
	for _, want := range wants {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("-v output lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestJSONOnFailure: a failed copy still prints one JSON object, with the
// error and what DST holds, and exits 1.
func TestJSONOnFailure(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	// A DST on a tmpfs far too small for it.
	full := t.TempDir()
	if err := syscall.Mount("tmpfs", full, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("needs root to mount a small tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(full, 0); err != nil {
			t.Errorf("unmount %s: %v", full, err)
		}
	})
	dst := filepath.Join(full, "dst")
	var stdout, stderr bytes.Buffer
	code := Run([]string{"--json", "--force", "--sparse", "never", src, dst}, &stdout, &stderr) // --force: past the room check
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout.String())
	}
	schematest.Output(t).Check(t, stdout.Bytes())
	e, _ := got["error"].(map[string]any)
	if m, _ := e["message"].(string); !strings.Contains(m, "no space left on device") || got["dst_state"] != "discarded" {
		t.Fatalf("error %v, dst_state %v: want ENOSPC and a discarded DST", got["error"], got["dst_state"])
	}
	if got["outcome"] != "failed" || got["exit_code"] != float64(ExitFailed) || e["errno"] != "ENOSPC" || e["kind"] != "failed" {
		t.Errorf("outcome %v, exit_code %v, error %v: want failed, 1, ENOSPC", got["outcome"], got["exit_code"], e)
	}
	if e["path"] != dst && !strings.HasPrefix(e["path"].(string), full) || e["op"] == "" || e["offset"] == nil {
		t.Errorf("error %v: want the op, path and offset of the write that failed", e)
	}
}
