package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/safedir"
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
	cmd := exec.Command(binary(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := fmt.Sprint(cmd.Process.Pid)
	ctl = controlPath(cmd.Process.Pid)
	waitUntil(t, func() bool { _, err := os.Stat(ctl); return err == nil })
	r := cli(t, "rate", pid)
	r.want(t, 0)
	if strings.TrimSpace(r.stdout) != wantCap {
		t.Errorf("ringcp rate %s printed %q, want the cap %s", pid, r.stdout, wantCap)
	}
	cli(t, "rate", pid, "0").want(t, 0)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if took := time.Since(start); took > limit {
		t.Errorf("the cap was lifted, yet the copy took %v", took)
	}
	if !strings.Contains(errOut.String(), "rate cap now none (ringcp rate)") {
		t.Errorf("stderr does not say the cap changed:\n%s", errOut.String())
	}
	return out.Bytes(), ctl
}

// TestMain keeps the control files of every copy this package's tests
// start, in-process or as a binary, out of /run.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ringcp-run-")
	if err != nil {
		panic(err)
	}
	os.Setenv("RINGCP_RUNDIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestStaleControlFiles: a copy removes the control files left by copies
// that were killed, and keeps those of copies still running.
func TestStaleControlFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("RINGCP_RUNDIR", dir)
	var pids [2]int
	for i := range pids {
		sleep := exec.Command("sleep", "30")
		if err := sleep.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { sleep.Process.Kill(); sleep.Wait() }()
		pids[i] = sleep.Process.Pid
	}
	start, err := startTime(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	// live: a running copy's; stale: its PID now another process's; gone:
	// no such process.
	live, stale, gone := controlPath(pids[0]), controlPath(pids[1]), filepath.Join(dir, "ringcp-999999999.rate")
	// And a temporary whose writer was killed, and one being written.
	deadTmp, liveTmp := filepath.Join(dir, "ringcp-5.rate.999999999.new"), filepath.Join(dir, fmt.Sprintf("ringcp-5.rate.%d.new", pids[0]))
	run := openTestRunDir(t)
	for path, c := range map[string]control{live: {start: start}, stale: {start: 1}, gone: {start: 1}} {
		if err := writeControl(run, filepath.Base(path), c); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{deadTmp, liveTmp} {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(t.TempDir(), "src")
	randomFile(t, src, 4096, 1)
	cli(t, src, filepath.Join(t.TempDir(), "dst")).want(t, 0)
	for path, want := range map[string]bool{live: true, stale: false, gone: false, deadTmp: false, liveTmp: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", path, err == nil, want)
		}
	}
}

// TestRateCommandRefuses: no signal goes to a process that is not a
// running copy: one without a control file (SIGUSR2 would kill it), or
// one whose PID matches a stale file left by a copy that was killed.
func TestRateCommandRefuses(t *testing.T) {
	t.Setenv("RINGCP_RUNDIR", t.TempDir())
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	pid := fmt.Sprint(sleep.Process.Pid)
	cli(t, "rate", pid, "10M").want(t, 2, "is not a running ringcp copy")
	if err := writeControl(openTestRunDir(t), controlName(sleep.Process.Pid), control{start: 1, rate: 5}); err != nil {
		t.Fatal(err)
	}
	cli(t, "rate", pid, "10M").want(t, 2, "the file is stale")
	cli(t, "rate", "x").want(t, 2, "not a process ID")
	cli(t, "rate").want(t, 2, "usage")
	// A SIGUSR2 would have ended it: a zombie now, state Z.
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil || strings.Contains(string(stat), ") Z ") {
		t.Fatalf("sleep was signalled: %q, %v", stat, err)
	}
}

// TestControlFile: the file's format round-trips; a start time is read
// past a process name with spaces and parentheses.
func TestControlFile(t *testing.T) {
	c := control{start: 12345, rate: 50 << 20}
	got, err := parseControl(c.String())
	if err != nil || got != c {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "start x\nmax_rate 1\n", "start 1\nmax_rate -1\n"} {
		if _, err := parseControl(bad); err == nil {
			t.Errorf("parseControl(%q) did not fail", bad)
		}
	}
	st, err := startTime(os.Getpid())
	if err != nil || st <= 0 {
		t.Errorf("startTime: %d, %v", st, err)
	}
}

// TestControlName: the names in RUNDIR that removeStale reads, and the
// ones it leaves alone.
func TestControlName(t *testing.T) {
	for name, want := range map[string][2]int{
		"ringcp-42.rate": {42, 0}, "ringcp-42.rate.7.new": {42, 7},
		"ringcp-42.rate.x.new": {-1}, "ringcp-42.rate.7": {-1}, "ringcp-42.ratex": {-1}, "ringcp--1.rate": {-1},
		"ringcp-.rate": {-1}, "other": {-1}, "ringcp-42.rate.0.new": {-1}, "ringcp-42.rate7.new": {-1},
	} {
		pid, writer, ok := parseControlName(name)
		if ok != (want[0] > 0) || ok && (pid != want[0] || writer != want[1]) {
			t.Errorf("parseControlName(%q) = %d, %d, %v; want %v", name, pid, writer, ok, want)
		}
	}
}

// controlPath is where pid's control file is.
func controlPath(pid int) string { return filepath.Join(runDir(), controlName(pid)) }

// openTestRunDir opens RUNDIR as the command does, for a test that
// plants files there.
func openTestRunDir(t *testing.T) *safedir.Dir {
	t.Helper()
	dir, err := openRunDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	return dir
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
