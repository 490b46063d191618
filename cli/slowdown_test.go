package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// TestSlowdownNote: the summary says what held the copy back on purpose:
// the cap in force and what --yield cut; nothing when neither did.
func TestSlowdownNote(t *testing.T) {
	if got := slowdownNote(copier.Report{Yield: &copier.YieldReport{LowestDepth: 64}}); got != "" {
		t.Errorf("no cap, no cut: %q", got)
	}
	got := slowdownNote(copier.Report{MaxRate: 8 << 20, Yield: &copier.YieldReport{Cuts: 3, CutSeconds: 1.25, LowestDepth: 2, LowestRate: 1 << 20}})
	for _, want := range []string{"capped at 8.00 MiB/s (--max-rate)", "yielded to other I/O for 1.2 s (--yield: 3 cuts, depth down to 2, rate to 1.00 MiB/s)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// TestSummarySaysCap: a copy under --max-rate says so in its summary
// line; one without a cap does not.
func TestSummarySaysCap(t *testing.T) {
	fx := newFixture(t)
	cli(t, "--progress", "none", "--max-rate", "64M", fx.Src, fx.New).want(t, exitOK, "; capped at 64.0 MiB/s (--max-rate)")
	r := cli(t, "--progress", "none", fx.Src, filepath.Join(fx.Dir, "other"))
	r.want(t, exitOK)
	if strings.Contains(r.stderr, "capped") {
		t.Errorf("a copy without a cap: %s", r.stderr)
	}
}

// TestJobsSummarySaysCap: a batch under --max-rate says so on its total
// line, in the words of a single copy's summary (the cap on the jobs
// together is the batch's, not a job's, so no job's line says it); a
// batch without a cap does not.
func TestJobsSummarySaysCap(t *testing.T) {
	fx := newFixture(t)
	list := filepath.Join(fx.Dir, "jobs.list")
	lines := fx.Src + " " + filepath.Join(fx.Dir, "j1") + "\n" + fx.Src + " " + filepath.Join(fx.Dir, "j2") + "\n"
	if err := os.WriteFile(list, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, "--progress", "none", "--max-rate", "64M", "--jobs", list)
	r.want(t, exitOK)
	if total := totalLine(r.stderr); !strings.Contains(total, "; capped at 64.0 MiB/s (--max-rate)") {
		t.Errorf("the total line of a capped batch does not say the cap: %q", total)
	}
	if err := os.WriteFile(list, []byte(strings.ReplaceAll(lines, "/j", "/k")), 0o644); err != nil {
		t.Fatal(err)
	}
	r = cli(t, "--progress", "none", "--jobs", list)
	r.want(t, exitOK)
	if strings.Contains(r.stderr, "capped") {
		t.Errorf("a batch without a cap: %s", r.stderr)
	}
}

// totalLine is the batch summary's total line in stderr.
func totalLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "ringcp: total: ") {
			return l
		}
	}
	return ""
}

// TestJobsSummarySaysVerified: with --verify, each job's line says its
// DST was read back, as a single copy's summary does; only --json said
// so, and the text read the same with --verify as without.
func TestJobsSummarySaysVerified(t *testing.T) {
	fx := newFixture(t)
	list := filepath.Join(fx.Dir, "jobs.list")
	lines := fx.Src + " " + filepath.Join(fx.Dir, "j1") + "\n" + fx.Src + " " + filepath.Join(fx.Dir, "j2") + "\n"
	if err := os.WriteFile(list, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, "--progress", "none", "--verify", "--jobs", list)
	r.want(t, exitOK)
	for _, job := range []string{"ringcp: job 1 ", "ringcp: job 2 "} {
		line := lineWith(r.stderr, job)
		if !strings.Contains(line, "; verified: DST reads back as SRC was read") {
			t.Errorf("%sline does not say it was verified: %q", job, line)
		}
	}
	if err := os.WriteFile(list, []byte(strings.ReplaceAll(lines, "/j", "/k")), 0o644); err != nil {
		t.Fatal(err)
	}
	r = cli(t, "--progress", "none", "--jobs", list)
	r.want(t, exitOK)
	if strings.Contains(r.stderr, "verified") {
		t.Errorf("a batch without --verify: %s", r.stderr)
	}
}

// lineWith is the first line of stderr that starts with prefix.
func lineWith(stderr, prefix string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
