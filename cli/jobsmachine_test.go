package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jobsList writes a list of n copies of a 3 MiB + 1 file and returns it.
func jobsList(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(t, src, 3<<20+1, 5)
	var text strings.Builder
	for i := range n {
		text.WriteString(src + " " + filepath.Join(dir, "dst"+string(rune('a'+i))) + "\n")
	}
	list := filepath.Join(dir, "list")
	if err := os.WriteFile(list, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return list
}

// TestJobsProgressJSON: --jobs --progress json writes a line per job and
// a total line each round; the last round has every job done at 100 and
// the total at 100, with the bytes of all the jobs. Before, --jobs
// refused the machine formats.
func TestJobsProgressJSON(t *testing.T) {
	r := cli(t, "--jobs", jobsList(t, 2), "--progress", "json", "--progress-interval", "10ms")
	r.want(t, exitOK)
	var jobs []jsonJobProgress
	var totals []jsonTotalProgress
	for _, line := range strings.Split(r.stderr, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var probe map[string]any
		if err := json.Unmarshal([]byte(line), &probe); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if probe["total"] == true {
			var tp jsonTotalProgress
			json.Unmarshal([]byte(line), &tp)
			totals = append(totals, tp)
		} else {
			var jp jsonJobProgress
			json.Unmarshal([]byte(line), &jp)
			jobs = append(jobs, jp)
		}
	}
	if len(totals) == 0 || len(jobs) != 2*len(totals) {
		t.Fatalf("%d job lines, %d total lines: want two job lines a round\n%s", len(jobs), len(totals), r.stderr)
	}
	last := totals[len(totals)-1]
	if last.Percent != 100 || last.BytesDone != 2*(3<<20+1) || last.BytesTotal != last.BytesDone || last.Done != 2 || last.Jobs != 2 {
		t.Errorf("last total %+v", last)
	}
	for _, j := range jobs[len(jobs)-2:] {
		if j.Percent != 100 || j.State != "done" || j.BytesDone != 3<<20+1 {
			t.Errorf("last job line %+v", j)
		}
	}
	for _, tp := range totals[:len(totals)-1] {
		if tp.Percent >= 100 {
			t.Errorf("100%% before the end: %+v", tp)
		}
	}
}

// TestJobsProgressQemuPercent: qemu's and nbdcopy's records count the
// jobs together and end at 100; with --json, qemu's go to stderr and
// stdout has the one object.
func TestJobsProgressQemuPercent(t *testing.T) {
	r := cli(t, "--jobs", jobsList(t, 3), "--progress", "qemu", "--progress-interval", "10ms")
	r.want(t, exitOK)
	if !strings.HasSuffix(r.stdout, "    (100.00/100%)\r\n") {
		t.Errorf("qemu records do not end at 100: %q", r.stdout[max(0, len(r.stdout)-60):])
	}
	r = cli(t, "--json", "--jobs", jobsList(t, 2), "--progress", "qemu", "--progress-interval", "10ms")
	r.want(t, exitOK)
	if !strings.Contains(r.stderr, "(100.00/100%)") || strings.Contains(r.stdout, "/100%") {
		t.Errorf("with --json: qemu records on stdout, or not on stderr:\nstdout %q\nstderr %q", r.stdout, r.stderr)
	}
	r = cli(t, "--jobs", jobsList(t, 2), "--progress", "percent", "--progress-interval", "10ms")
	r.want(t, exitOK)
	if !strings.Contains(r.stderr, "\n100/100\nringcp: job 1") {
		t.Errorf("percent lines do not end at 100/100 before the jobs' lines: %q", r.stderr)
	}
}
