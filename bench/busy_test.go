package main

import (
	"bytes"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParseForeground: fio's JSON (after its notes on stdout) gives the
// foreground's read IOPS and latency percentiles in microseconds.
func TestParseForeground(t *testing.T) {
	out := []byte(`fio: terminating on signal 2
{"jobs": [{"jobname": "foreground", "read": {"iops": 12345.6, "clat_ns": {"percentile": {"50.000000": 80000, "99.000000": 1200000}}}}]}`)
	fg, err := parseForeground(out)
	if err != nil || fg.IOPS != 12345.6 || fg.P50us != 80 || fg.P99us != 1200 {
		t.Fatalf("%+v, %v", fg, err)
	}
	if _, err := parseForeground([]byte(`{"jobs": []}`)); err == nil {
		t.Error("no job: no error")
	}
}

// TestSummarizeBusy: speeds against ringcp-alone and p99 against
// fg-alone, per round, medians over rounds; a failed run counts in ok
// only.
func TestSummarizeBusy(t *testing.T) {
	const size = 1e9
	var runs []*Run
	add := func(tool string, round int, secs float64, p99 float64, err error) {
		r := &Run{Tool: tool, Round: round, Size: size, Wall: time.Duration(secs * float64(time.Second)), Err: err}
		if p99 > 0 {
			r.Foreground = &fgResult{IOPS: 400, P99us: p99}
			if tool == "fg-alone" {
				r.Foreground.IOPS = 1000
			}
		}
		runs = append(runs, r)
	}
	for round, k := range []float64{1, 2, 4} { // the machine slows down from round to round
		add("fg-alone", round+1, 10, 100*k, nil)
		add("ringcp-alone", round+1, 1*k, 0, nil)
		add("ringcp-yield", round+1, 2*k, 150*k, nil)
	}
	add("dd-1M", 1, 1, 900, errWrong)
	rows := summarizeBusy(runs)
	byTool := map[string]*busyRow{}
	for _, r := range rows {
		byTool[r.Tool] = r
	}
	y := byTool["ringcp-yield"]
	if y == nil || y.OfAlone != 0.5 || y.P99xAlone != 1.5 || y.IOPSShare != 0.4 || y.OK != 3 || y.MBps != 250 {
		t.Fatalf("ringcp-yield: %+v", y)
	}
	if d := byTool["dd-1M"]; d == nil || d.OK != 0 || d.Runs != 1 || !math.IsNaN(d.MBps) {
		t.Fatalf("dd-1M: %+v", d)
	}
	if a := byTool["fg-alone"]; a == nil || !math.IsNaN(a.MBps) || a.P99xAlone != 1 {
		t.Fatalf("fg-alone: %+v", a)
	}
	var md bytes.Buffer
	writeBusy(&md, &workloads[len(workloads)-1], runs, 200<<20)
	for _, want := range []string{"| ringcp-yield | 3/3 | 250 | 50% | 400 | 40% |", "**FAILED** 0/1", "200MiB/s"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, md.String())
		}
	}
}

func TestWindowTools(t *testing.T) {
	saved, savedBusy, savedWorkloads := tools, busyTools, slices.Clone(workloads)
	defer func() { tools, busyTools, workloads = saved, savedBusy, savedWorkloads }()
	if err := addWindowTools("256K:1,8M:8,256K:1"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ringcp-w256Kx1", "ringcp-w8Mx8"} {
		tool, err := toolByName(name)
		if err != nil {
			t.Fatal(err)
		}
		argv := tool.Plan(Job{Pair: &Pair{Src: "s", Dst: "d"}})[0][0]
		if got := strings.Join(argv, " "); !strings.Contains(got, "--queue-depth=") || !strings.Contains(got, "--block-size=") {
			t.Errorf("%s runs %q: want a fixed block size and queue depth", name, got)
		}
	}
	if n := len(busyTools) - len(savedBusy); n != 2 {
		t.Errorf("%d rows added for two distinct windows, want 2", n)
	}
	wl, err := findWorkload("busy-bfq")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(wl.Tools, "ringcp-w8Mx8") {
		t.Errorf("busy-bfq runs %v: no window tool", wl.Tools)
	}
	for _, bad := range []string{"1M", "1M:0", "1000:1", "x:2"} {
		if err := addWindowTools(bad); err == nil {
			t.Errorf("-busy-windows %q accepted", bad)
		}
	}
}

// TestRingcpNeighbourDetails: the busy workload keeps ringcp's neighbour
// report (the speed alone it learnt, which windows it held and for how
// long) in runs.csv's details, so a row's figures can be explained.
func TestRingcpNeighbourDetails(t *testing.T) {
	out := `{"engine":"io_uring","bytes":1048576,"neighbour":{"min_bytes_in_flight":131072,"solo_rate":300000000,` +
		`"best_rate":250000000,"keep":0.75,"median_bytes_in_flight":262144,"held_milliseconds":5000,"floor_milliseconds":0,` +
		`"samples":400,"others_milliseconds":9000,"restarts":2,` +
		`"windows":[{"bytes_in_flight":131072,"milliseconds":1200},{"bytes_in_flight":262144,"milliseconds":7800}]}}`
	r := &Run{Workload: "busy", Tool: "ringcp", Round: 1, Size: 1 << 20, Wall: time.Second}
	if err := parseRingcp([][]byte{[]byte(out)}, r); err != nil {
		t.Fatal(err)
	}
	want := &ringcpNeighbour{SoloRate: 300e6, BestRate: 250e6, Keep: 0.75, MedianBytes: 256 << 10, HeldMillis: 5000,
		OthersMillis: 9000, Samples: 400, Restarts: 2, Windows: []ringcpWindow{{128 << 10, 1200}, {256 << 10, 7800}}}
	if r.Ringcp == nil || !reflect.DeepEqual(r.Ringcp.Neighbour, want) {
		t.Fatalf("neighbour %+v, want %+v", r.Ringcp.Neighbour, want)
	}
	path := filepath.Join(t.TempDir(), "runs.csv")
	if err := writeRunsCSV(path, []*Run{r}); err != nil {
		t.Fatal(err)
	}
	back, err := readRunsCSV(path)
	if err != nil || len(back) != 1 || back[0].Ringcp == nil || !reflect.DeepEqual(back[0].Ringcp.Neighbour, want) {
		t.Fatalf("runs.csv gave back %+v (%v)", back, err)
	}
}

// TestRingcpYieldDetails: the busy workload keeps what --yield's
// controller did (its cuts, the time cut, the lowest depth and rate) in
// runs.csv's details beside the neighbour's windows: a --yield row's
// figures depend on both, and the cuts were not recorded.
func TestRingcpYieldDetails(t *testing.T) {
	out := `{"engine":"io_uring","bytes":1048576,"yield":{"cuts":7,"raises":40,"futile":2,"cut_milliseconds":5100,` +
		`"lowest_depth":1,"lowest_rate":33554432,"probe_base_microseconds":180,"probe_max_microseconds":2500,` +
		`"others_max_iops":40000,"psi_some_max":0.9,"psi_full_max":0.2}}`
	r := &Run{Workload: "busy", Tool: "ringcp-yield", Round: 1, Size: 1 << 20, Wall: time.Second}
	if err := parseRingcp([][]byte{[]byte(out)}, r); err != nil {
		t.Fatal(err)
	}
	want := &ringcpYield{Cuts: 7, Raises: 40, Futile: 2, CutMillis: 5100, LowestDepth: 1, LowestRate: 32 << 20,
		ProbeBase: 180, ProbeMax: 2500}
	if r.Ringcp == nil || !reflect.DeepEqual(r.Ringcp.Yield, want) {
		t.Fatalf("yield %+v, want %+v", r.Ringcp.Yield, want)
	}
	path := filepath.Join(t.TempDir(), "runs.csv")
	if err := writeRunsCSV(path, []*Run{r}); err != nil {
		t.Fatal(err)
	}
	back, err := readRunsCSV(path)
	if err != nil || len(back) != 1 || back[0].Ringcp == nil || !reflect.DeepEqual(back[0].Ringcp.Yield, want) {
		t.Fatalf("runs.csv gave back %+v (%v)", back, err)
	}
}
