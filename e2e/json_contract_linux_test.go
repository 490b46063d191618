package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/internal/schematest"
)

// The --json contract as processes see it: the outcomes only a running
// ringcp has (a signal, a live copy to ask the rate of), each object
// checked against schema/ringcp-output.schema.json. cli's
// TestJSONContract runs the others in-process.

// TestJSONInterrupted: a copy and a batch stopped by a signal print one
// object each, outcome interrupted, with the exit code the process exits
// with (128+signal) in the envelope and in each job stopped.
func TestJSONInterrupted(t *testing.T) {
	s := schematest.Output(t)
	p := startSlow(t, "--json", slowSrc(t), filepath.Join(t.TempDir(), "dst"))
	p.signal(t, syscall.SIGINT)
	r := p.wait(t)
	if r.code != 130 {
		t.Fatalf("exit %d, want 130\n%s", r.code, r.stderr)
	}
	got := s.Check(t, []byte(r.stdout))
	e, _ := got["error"].(map[string]any)
	if got["outcome"] != "interrupted" || fmt.Sprint(got["exit_code"]) != "130" || e["kind"] != "interrupted" {
		t.Errorf("copy: %s", r.stdout)
	}

	dir := t.TempDir()
	src := slowSrc(t)
	list := filepath.Join(dir, "list")
	text := src + " " + filepath.Join(dir, "a") + "\n" + src + " " + filepath.Join(dir, "b") + "\n"
	if err := os.WriteFile(list, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p = startSlowDepth(t, "", 2, "--json", "--parallel", "1", "--jobs", list)
	p.signal(t, syscall.SIGTERM)
	r = p.wait(t)
	if r.code != 143 {
		t.Fatalf("batch: exit %d, want 143\n%s", r.code, r.stderr)
	}
	got = s.Check(t, []byte(r.stdout))
	if got["outcome"] != "interrupted" || fmt.Sprint(got["exit_code"]) != "143" {
		t.Errorf("batch: %s", r.stdout)
	}
	jobs, _ := got["jobs"].([]any)
	if len(jobs) != 2 {
		t.Fatalf("batch: %d jobs in %s", len(jobs), r.stdout)
	}
	for i, want := range []string{"interrupted", "not_started"} {
		j := jobs[i].(map[string]any)
		if j["outcome"] != want || fmt.Sprint(j["exit_code"]) != "143" {
			t.Errorf("job %d: outcome %v exit_code %v, want %s and 143", i+1, j["outcome"], j["exit_code"], want)
		}
	}
}

// TestJSONRateLive: `ringcp rate --json PID` on a running copy reads and
// sets its cap in the envelope; the copy's own object follows the
// schema too.
func TestJSONRateLive(t *testing.T) {
	s := schematest.Output(t)
	dir := t.TempDir()
	t.Setenv("RINGCP_RUNDIR", filepath.Join(dir, "run"))
	src := filepath.Join(dir, "src")
	randomFile(t, src, 8<<20, 4)
	p := startRingcp(t, "--max-rate", "1M", "--json", "--progress", "none", src, filepath.Join(dir, "dst"))
	waitUntil(t, func() bool { _, err := os.Stat(controlPath(p.pid())); return err == nil })
	pid := fmt.Sprint(p.pid())
	for _, c := range []struct {
		args []string
		cap  string
	}{{[]string{"rate", "--json", pid}, "1048576"}, {[]string{"rate", "--json", pid, "0"}, "0"}} {
		r := cli(t, c.args...)
		r.want(t, exitOK)
		got := s.Check(t, []byte(r.stdout))
		if fmt.Sprint(got["max_rate"]) != c.cap || fmt.Sprint(got["pid"]) != pid || got["outcome"] != "complete" {
			t.Errorf("%v: %s", c.args, r.stdout)
		}
	}
	r := p.wait(t)
	r.want(t, exitOK)
	got := s.Check(t, []byte(r.stdout))
	if n, _ := got["bytes"].(json.Number); n.String() != "8388608" {
		t.Errorf("copy: %s", r.stdout)
	}
}
