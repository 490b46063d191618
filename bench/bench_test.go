package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestContentIsAddressable(t *testing.T) {
	c := randomContent{seed: 42}
	whole := make([]byte, 1<<16+13)
	c.Fill(0, whole)
	// Any piece, at any offset, must be the same bytes as the whole.
	for _, cut := range [][2]int{{0, 1}, {1, 7}, {3, 4096}, {8, 16}, {4095, 4097 + 11}, {len(whole) - 5, len(whole)}} {
		part := make([]byte, cut[1]-cut[0])
		c.Fill(int64(cut[0]), part)
		if !bytes.Equal(part, whole[cut[0]:cut[1]]) {
			t.Errorf("Fill(%d, %d bytes) differs from the whole", cut[0], len(part))
		}
	}
	other := make([]byte, len(whole))
	randomContent{seed: 43}.Fill(0, other)
	if bytes.Equal(other, whole) {
		t.Error("seeds 42 and 43 give the same data")
	}
	if bytes.Contains(whole, make([]byte, 512)) {
		t.Error("random content has a zero sector, which sparse-aware peers would skip")
	}
}

func TestVerifyCopy(t *testing.T) {
	const size = 3*chunkSize/2 + 12345
	c := randomContent{seed: 7}
	data := make([]byte, size)
	c.Fill(0, data)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := verifyCopy(write("good", data), c, size); err != nil {
		t.Fatalf("good copy: %v", err)
	}
	flipped := bytes.Clone(data)
	flipped[chunkSize+99] ^= 1
	short := data[:size-1]
	long := append(bytes.Clone(data), 0)
	for name, b := range map[string][]byte{"flipped": flipped, "short": short, "long": long} {
		err := verifyCopy(write(name, b), c, size)
		if !errors.Is(err, errWrong) {
			t.Errorf("%s copy: got %v, want errWrong", name, err)
		}
	}
	err := verifyCopy(write("flipped", flipped), c, size)
	if !strings.Contains(err.Error(), strconv.Itoa(chunkSize+99)) {
		t.Errorf("flipped copy: %v does not name offset %d", err, chunkSize+99)
	}
	if err := verifyCopy(filepath.Join(dir, "absent"), c, size); !errors.Is(err, errWrong) {
		t.Errorf("absent copy: got %v, want errWrong", err)
	}
}

func TestParallelDDCoversOnce(t *testing.T) {
	for _, size := range []int64{4 << 20, 64<<20 + 12345, 1<<30 + 512, 3 << 20} {
		p := parallelDDPlan(4, 1<<20)(Job{Pair: &Pair{Src: "s", Dst: "d", Size: size}})
		if len(p) != 1 || len(p[0]) != 4 {
			t.Fatalf("size %d: want one stage of four dd's, got %v", size, p)
		}
		var next int64
		for i, argv := range p[0] {
			kv := map[string]int64{}
			for _, a := range argv[1:] {
				k, v, _ := strings.Cut(a, "=")
				n, err := strconv.ParseInt(v, 10, 64)
				if err == nil {
					kv[k] = n
				}
			}
			if kv["skip"] != kv["seek"] || kv["skip"]*(1<<20) != next {
				t.Errorf("size %d dd %d: skip %d seek %d, want %d", size, i, kv["skip"], kv["seek"], next>>20)
			}
			if !strings.Contains(strings.Join(argv, " "), "conv=notrunc") {
				t.Errorf("dd %d lacks conv=notrunc", i)
			}
			count, has := kv["count"]
			if i == 3 {
				if has {
					t.Errorf("last dd has count=%d; it must run to EOF", count)
				}
				continue
			}
			next += count << 20
		}
	}
}

func TestSectorToolsCutPadding(t *testing.T) {
	odd := Job{Pair: &Pair{Src: "s", Dst: "d", Size: 1<<20 + 7}}
	even := Job{Pair: &Pair{Src: "s", Dst: "d", Size: 1 << 20}}
	dev := Job{Pair: &Pair{Src: "s", Dst: "d", Size: 1<<20 + 7, DstDev: true}}
	for _, plan := range []func(Job) Plan{sgpDDPlan, qemuImgPlan} {
		if p := plan(odd); len(p) != 2 || p[1][0][0] != "truncate" || p[1][0][2] != strconv.Itoa(1<<20+7) {
			t.Errorf("odd file: want a truncate stage, got %v", p)
		}
		if p := plan(even); len(p) != 1 {
			t.Errorf("even file: want no truncate, got %v", p)
		}
		if p := plan(dev); len(p) != 1 {
			t.Errorf("device: want no truncate, got %v", p)
		}
	}
	if p := sgpDDPlan(odd); !strings.Contains(planString(p), "count=2049") {
		t.Errorf("sgp_dd must count the tail's block: %s", planString(p))
	}
}

// TestParseSize: the bench reads sizes as ringcp does (KB is 1000, K and
// KiB 1024), sums an odd tail after a plus, and sizeLabel spells every
// size so that parseSize reads it back.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"4G": 4 << 30, "1GiB": 1 << 30, "512k": 512 << 10, "64M+12345": 64<<20 + 12345,
		"1048576": 1 << 20, "2MB": 2e6, "1KB": 1000, "1T": 1 << 40, "4KiB+1": 4097, "4g": 4 << 30,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "4X", "1.5G", "4G+", "4gb", " 4G", "8191P+8191P"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q): want an error", in)
		}
	}
	for n, want := range map[int64]string{
		0: "0", 511: "511", 4096: "4KiB", 4097: "4KiB+1", 1536 << 10: "1536KiB", 64<<20 + 12345: "64MiB+12345",
		256<<20 + 4321: "256MiB+4321", 4 << 30: "4GiB", 1<<30 + 512: "1GiB+512", 16 << 30: "16GiB",
	} {
		got := sizeLabel(n)
		if got != want {
			t.Errorf("sizeLabel(%d) = %q, want %q", n, got, want)
		}
		if back, err := parseSize(got); err != nil || back != n {
			t.Errorf("parseSize(sizeLabel(%d) = %q) = %d, %v", n, got, back, err)
		}
	}
}

func TestRotate(t *testing.T) {
	ts := []string{"a", "b", "c"}
	for k, want := range []string{"abc", "bca", "cab", "abc"} {
		if got := strings.Join(rotate(ts, k), ""); got != want {
			t.Errorf("rotate(%d) = %s, want %s", k, got, want)
		}
	}
}

func TestSummaryRatiosAndWrong(t *testing.T) {
	s := time.Second
	runs := []*Run{
		{Tool: "ringcp", Round: 1, Wall: 2 * s, Size: 1e9},
		{Tool: "dd-1M", Round: 1, Wall: 4 * s, Size: 1e9},
		{Tool: "ringcp", Round: 2, Wall: 4 * s, Size: 1e9},
		{Tool: "dd-1M", Round: 2, Wall: 6 * s, Size: 1e9},
		{Tool: "ringcp", Round: 3, Wall: 3 * s, Size: 1e9},
		{Tool: "dd-1M", Round: 3, Wall: 9 * s, Size: 1e9},
		{Tool: "nbdcopy", Round: 1, Wall: s / 10, Size: 1e9, Err: errWrong},
		{Tool: "nbdcopy", Round: 2, Wall: 5 * s, Size: 1e9},
	}
	rows := summarize(runs)
	got := map[string]*summary{}
	for _, r := range rows {
		got[r.Tool] = r
	}
	if r := got["dd-1M"]; r.Ratio != 2 || r.Wall != 6*s || r.OK != 3 {
		t.Errorf("dd-1M: ratio %v wall %v ok %d; want median ratio 2 (of 2, 1.5, 3), wall 6s, 3 ok",
			r.Ratio, r.Wall, r.OK)
	}
	if r := got["nbdcopy"]; !r.Wrong || rows[len(rows)-1] != r {
		t.Errorf("a tool with a wrong copy must be flagged and listed last: %+v", r)
	}
	var md bytes.Buffer
	b := &bench{cfg: Config{Rounds: 3}, shapes: map[string]fioShape{}}
	b.writeWorkload(&md, &workloads[0], runs)
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "| nbdcopy ") && (!strings.Contains(line, "WRONG") || strings.Contains(line, "10000")) {
			t.Errorf("wrong copy shown with a speed: %s", line)
		}
	}
}

func TestRunsCSVRoundTrip(t *testing.T) {
	rep := &ringcpReport{Engine: "io_uring", BlockSize: 8 << 20, QueueDepth: 8, DirectSrc: true,
		DirectDst: true, Bytes: 1<<30 - 4096, BytesHoles: 4096, BytesRead: 1 << 30, Milliseconds: 1250}
	in := []*Run{
		{Workload: "file", Tool: "ringcp", Round: 1, Order: 2, Size: 1 << 30, Wall: 1500 * time.Millisecond,
			User: 20 * time.Millisecond, Sys: 70 * time.Millisecond, MaxRSS: 69 << 20, Cmd: "ringcp a b",
			details: details{Ringcp: rep, DstAlloc: 1<<30 - 4096, SrcAlloc: 1 << 30}},
		{Workload: "file", Tool: "nbdcopy", Round: 1, Order: 1, Size: 1 << 30, Wall: time.Second,
			Err: errWrong},
		{Workload: "file", Tool: "fio-ceiling", Round: 1, Order: 3, Size: 1 << 30, Wall: time.Second,
			details: details{Fio: &fioResult{Shape: fioShape{32 << 20, 32}, ReadMBps: 1785.5, WriteMBps: 1100}}},
		{Workload: "sweep", Tool: "ringcp", Round: 2, Size: 1 << 30, Wall: 2 * time.Second,
			Err: errors.New("exit status 1"), details: details{Sweep: &sweepPoint{}}},
		{Workload: "sweep", Tool: "ringcp", Round: 2, Size: 1 << 30, Wall: 2 * time.Second,
			details: details{Ringcp: rep, Sweep: &sweepPoint{256 << 10, 64}}},
	}
	path := filepath.Join(t.TempDir(), "runs.csv")
	if err := writeRunsCSV(path, in); err != nil {
		t.Fatal(err)
	}
	out, err := readRunsCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d runs, wrote %d", len(out), len(in))
	}
	for i, r := range out {
		w := in[i]
		if r.Workload != w.Workload || r.Tool != w.Tool || r.Round != w.Round || r.Size != w.Size ||
			r.Wall != w.Wall || r.CPU() != w.CPU() || r.MaxRSS != w.MaxRSS || r.Verdict() != w.Verdict() ||
			!reflect.DeepEqual(r.details, w.details) {
			t.Errorf("run %d: read %+v, wrote %+v", i, r, w)
		}
	}
}

// TestReadRunsCSVBeforeDetails: a runs.csv written before the details
// column (bench/results keeps such runs) still gives -replot ringcp's
// choices and the sweep's grid points, from the plain columns.
func TestReadRunsCSVBeforeDetails(t *testing.T) {
	runs, err := readRunsCSV(filepath.Join("testdata", "runs-info.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := []details{
		{Ringcp: &ringcpReport{Engine: "io_uring", BlockSize: 8 << 20, QueueDepth: 8}},
		{},
		{Ringcp: &ringcpReport{Engine: "io_uring", BlockSize: 512 << 10, QueueDepth: 16}, Sweep: &sweepPoint{512 << 10, 16}},
		{Ringcp: &ringcpReport{Engine: "io_uring", BlockSize: 8 << 20, QueueDepth: 8}, Sweep: &sweepPoint{}},
	}
	if len(runs) != len(want) {
		t.Fatalf("read %d runs, want %d", len(runs), len(want))
	}
	for i, r := range runs {
		if !reflect.DeepEqual(r.details, want[i]) {
			t.Errorf("run %d (%s): %+v, want %+v", i, r.Tool, r.details, want[i])
		}
	}
	if def, rep := sweepDefault(runs[2:]); def <= 0 || rep == nil || rep.BlockSize != 8<<20 {
		t.Errorf("sweep default: %.0f MB/s, %+v", def, rep)
	}
}

// TestModuleRoot: the bench, a module of its own, finds ringcp's module
// (the directory above bench/) with and without the repository's go.work,
// so that TestQuick and `go run ./bench` build the ringcp beside them.
func TestModuleRoot(t *testing.T) {
	want, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, gowork := range []string{"", "off"} {
		t.Run("GOWORK="+gowork, func(t *testing.T) {
			t.Setenv("GOWORK", gowork)
			got, err := moduleRoot()
			if err != nil || got != want {
				t.Fatalf("moduleRoot() = %q, %v; want %q", got, err, want)
			}
		})
	}
}

// TestJobSizes: the four jobs cover the total once, all but the last a
// multiple of the unit (loop device offsets must be).
func TestJobSizes(t *testing.T) {
	for _, total := range []int64{64<<20 + 12345, 4 << 30, 4096 * 4, 2049} {
		for _, unit := range []int64{512, 4096} {
			sizes := jobSizes(total, unit)
			var sum int64
			for i, n := range sizes {
				if n < 0 || (i < len(sizes)-1 && n%unit != 0) {
					t.Errorf("total %d unit %d: job %d is %d bytes", total, unit, i, n)
				}
				sum += n
			}
			if len(sizes) != jobsParts || sum != total {
				t.Errorf("total %d unit %d: %v adds up to %d", total, unit, sizes, sum)
			}
		}
	}
}

// TestEachJob: each job's plan runs beside the others', stage by stage:
// four qemu-imgs at once, then the truncates of the odd-sized DSTs.
func TestEachJob(t *testing.T) {
	p := &Pair{Jobs: []*Pair{{Src: "a", Dst: "A", Size: 1024}, {Src: "b", Dst: "B", Size: 1000}, {Src: "c", Dst: "C", Size: 512}, {Src: "d", Dst: "D", Size: 7}}}
	plan := eachJob(qemuImgPlan)(Job{Pair: p})
	if len(plan) != 2 || len(plan[0]) != 4 || len(plan[1]) != 2 {
		t.Fatalf("plan %v: want 4 conversions, then 2 truncates", plan)
	}
	for i, argv := range plan[0] {
		if got := argv[len(argv)-2:]; got[0] != p.Jobs[i].Src || got[1] != p.Jobs[i].Dst {
			t.Errorf("command %d copies %v", i, got)
		}
	}
	if plan[1][0][len(plan[1][0])-1] != "B" || plan[1][1][len(plan[1][1])-1] != "D" {
		t.Errorf("truncates %v: want B and D", plan[1])
	}
}
