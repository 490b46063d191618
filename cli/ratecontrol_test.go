package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/safedir"
)

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
