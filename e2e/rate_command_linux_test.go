package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRateCommand: a real copy started at 1 MiB/s, which would take 16 s,
// shows its cap through `ringcp rate PID`; `ringcp rate PID 0` lifts it,
// the copy says so, ends far sooner, and reports no cap; its control file
// is gone afterwards.
func TestRateCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("RINGCP_RUNDIR", filepath.Join(dir, "run"))
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := randomFile(t, src, 16<<20, 8)
	out, ctl := liftCap(t, "1048576", 12*time.Second, "--max-rate", "1M", "--json", "--progress", "none", src, dst)
	var rep jsonReport
	if err := json.Unmarshal(out, &rep); err != nil || rep.MaxRate != 0 {
		t.Errorf("report %s: %v", out, err)
	}
	if got := readRange(t, dst, 0, 16<<20); !bytes.Equal(got, data) {
		t.Error("DST differs from SRC")
	}
	if _, err := os.Stat(ctl); !os.IsNotExist(err) {
		t.Errorf("control file %s left behind: %v", ctl, err)
	}
}

// TestRateCommandJobs: with --jobs, --max-rate caps the jobs together
// and `ringcp rate PID` changes that one cap: two jobs started at 2 MiB/s
// together (8 s) show it, have it lifted, end far sooner, and report the
// batch's cap as none.
func TestRateCommandJobs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("RINGCP_RUNDIR", filepath.Join(dir, "run"))
	var lines []string
	var data [2][]byte
	for i := range data {
		src, dst := filepath.Join(dir, fmt.Sprint("src", i)), filepath.Join(dir, fmt.Sprint("dst", i))
		data[i] = randomFile(t, src, 8<<20, uint64(20+i))
		lines = append(lines, src+" "+dst)
	}
	list := filepath.Join(dir, "jobs.list")
	if err := os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := liftCap(t, "2097152", 6*time.Second, "--max-rate", "2M", "--json", "--progress", "none", "--jobs", list)
	var rep struct {
		Jobs  []jsonReport `json:"jobs"`
		Total struct {
			MaxRate *int64 `json:"max_rate"`
		} `json:"total"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || rep.Total.MaxRate == nil || *rep.Total.MaxRate != 0 || len(rep.Jobs) != 2 {
		t.Errorf("report %s: %v: want total.max_rate 0 and two jobs", out, err)
	}
	for i, j := range rep.Jobs {
		if j.MaxRate != 0 { // the cap is the batch's; a job's own would outlive its lifting
			t.Errorf("job %d has a cap of its own, %d", i+1, j.MaxRate)
		}
	}
	for i := range data {
		if got := readRange(t, filepath.Join(dir, fmt.Sprint("dst", i)), 0, 8<<20); !bytes.Equal(got, data[i]) {
			t.Errorf("DST %d differs from SRC", i)
		}
	}
}

// liftCap runs ringcp with args (under a cap of wantCap bytes/s), checks
// that `ringcp rate PID` shows that cap, lifts it with `ringcp rate PID
// 0`, waits for the copy, and checks that it ended within limit and said
// the cap changed. It returns the copy's stdout and its control file.
func liftCap(t *testing.T, wantCap string, limit time.Duration, args ...string) (stdout []byte, ctl string) {
	t.Helper()
	start := time.Now()
	p := startRingcp(t, args...)
	pid := fmt.Sprint(p.pid())
	ctl = controlPath(p.pid())
	waitUntil(t, func() bool { _, err := os.Stat(ctl); return err == nil })
	r := cli(t, "rate", pid)
	r.want(t, 0)
	if strings.TrimSpace(r.stdout) != wantCap {
		t.Errorf("ringcp rate %s printed %q, want the cap %s", pid, r.stdout, wantCap)
	}
	cli(t, "rate", pid, "0").want(t, 0)
	copied := p.wait(t)
	if copied.code != exitOK {
		t.Fatalf("exit %d\n%s", copied.code, copied.stderr)
	}
	if took := time.Since(start); took > limit {
		t.Errorf("the cap was lifted, yet the copy took %v", took)
	}
	if !strings.Contains(copied.stderr, "rate cap now none (ringcp rate)") {
		t.Errorf("stderr does not say the cap changed:\n%s", copied.stderr)
	}
	return []byte(copied.stdout), ctl
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatal("timed out waiting")
}

// controlPath is where a copy keeps its control file: $RINGCP_RUNDIR,
// which the tests set, as the README says.
func controlPath(pid int) string {
	return filepath.Join(os.Getenv("RINGCP_RUNDIR"), controlName(pid))
}

// controlName is the name of a copy's control file in its RUNDIR.
func controlName(pid int) string { return fmt.Sprintf("ringcp-%d.rate", pid) }
