package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The busy-host workload: a copy beside a foreground that needs the same
// disk. For the whole of each copy, fio reads 4 KiB at random with 4 in
// flight (O_DIRECT, libaio) from a file on the disk the copy reads and
// writes; the report gives the foreground's IOPS and p99 latency beside
// each copy and alone (fg-alone: the foreground with no copy), and each
// copy's MB/s, against ringcp alone (ringcp-alone: no foreground).

// fgSize is the foreground's file: larger than the cache of the host's
// disk image is not needed, O_DIRECT keeps it out of the guest's.
const fgSize = 1 << 30

// fgRamp is how long the foreground runs before its figures count, and
// before the copy starts: fio's own start is not measured.
const fgRamp = 500 * time.Millisecond

// busyTools are the busy workload's copies. ringcp and dd-1M and sgp_dd
// are the table's; the rest only mean something here.
// ringcp-q8 is the window every copy kept before the good neighbour (issue
// 27): the default 8 slots of 8 MiB, fixed by --queue-depth; ringcp-alone
// against ringcp-q8-alone says what the default costs a copy alone.
var busyTools = []string{"fg-alone", "ringcp-alone", "ringcp-q8-alone", "ringcp", "ringcp+ionice", "ringcp-q8",
	"ringcp-max-rate", "ringcp-max-rate+ionice", "ringcp-idle", "ringcp-yield", "ringcp-yield+ionice",
	"qemu-img-r", "qemu-img-r+ionice", "dd-1M", "dd-1M+ionice", "sgp_dd", "sgp_dd+ionice"}

func init() {
	busy := []string{"busy", "busy-mq-deadline", "busy-bfq"}
	tools = append(tools,
		Tool{Name: "fg-alone", Needs: []string{"sleep"}, Plan: sleepPlan, NoCopy: true, Workloads: busy},
		Tool{Name: "ringcp-alone", Needs: []string{"ringcp"}, Plan: ringcpPlan(), Parse: parseRingcp, NoForeground: true, Workloads: busy},
		Tool{Name: "ringcp-max-rate", Needs: []string{"ringcp"}, Plan: ringcpRatePlan, Parse: parseRingcp, Workloads: busy},
		Tool{Name: "ringcp-idle", Needs: []string{"ringcp"}, Plan: ringcpPlan("--ioprio=idle"), Parse: parseRingcp, Workloads: busy},
		Tool{Name: "ringcp-yield", Needs: []string{"ringcp"}, Plan: ringcpPlan("--yield"), Parse: parseRingcp, Workloads: busy},
		Tool{Name: "ringcp-q8-alone", Needs: []string{"ringcp"}, Plan: ringcpPlan("--queue-depth=8"), Parse: parseRingcp, NoForeground: true, Workloads: busy},
		Tool{Name: "ringcp-q8", Needs: []string{"ringcp"}, Plan: ringcpPlan("--queue-depth=8"), Parse: parseRingcp, Workloads: busy},
		Tool{Name: "ringcp+ionice", Needs: []string{"ionice", "ringcp"}, Plan: ioniced(ringcpPlan()), Parse: parseRingcp, Workloads: busy},
		Tool{Name: "ringcp-max-rate+ionice", Needs: []string{"ionice", "ringcp"}, Plan: ioniced(ringcpRatePlan), Parse: parseRingcp, Workloads: busy},
		Tool{Name: "ringcp-yield+ionice", Needs: []string{"ionice", "ringcp"}, Plan: ioniced(ringcpPlan("--yield")), Parse: parseRingcp, Workloads: busy},
		Tool{Name: "qemu-img-r", Needs: []string{"qemu-img", "truncate"}, Plan: qemuImgRatePlan, Workloads: busy},
		Tool{Name: "qemu-img-r+ionice", Needs: []string{"ionice", "qemu-img", "truncate"}, Plan: ioniced(qemuImgRatePlan), Workloads: busy},
		Tool{Name: "dd-1M+ionice", Needs: []string{"ionice", "dd"}, Plan: ioniced(ddPlan("1M")), Workloads: busy},
		Tool{Name: "sgp_dd+ionice", Needs: []string{"ionice", "sgp_dd", "truncate"}, Plan: ioniced(sgpDDPlan), Workloads: busy},
	)
	debianPkg["ionice"], debianPkg["sleep"] = "util-linux", "coreutils"
}

// sleepPlan is fg-alone: the foreground alone, as long as a copy of the
// workload's size at 100 MB/s takes, 2 to 30 s.
func sleepPlan(j Job) Plan {
	secs := min(max(j.Size/100e6, 2), 30)
	return Plan{{{"sleep", strconv.FormatInt(secs, 10)}}}
}

// ringcpRatePlan caps ringcp at the run's -busy-rate.
func ringcpRatePlan(j Job) Plan {
	return ringcpPlan("--max-rate=" + strconv.FormatInt(j.Rate, 10))(j)
}

// qemuImgRatePlan is vdsm's convert with Proxmox's bandwidth limit: -r
// caps what it moves per second, at the run's -busy-rate.
func qemuImgRatePlan(j Job) Plan {
	p := qemuImgPlan(j)
	argv := p[0][0]
	p[0][0] = append(append(slices.Clone(argv[:2]), "-r", strconv.FormatInt(j.Rate, 10)), argv[2:]...)
	return p
}

// ioniced runs the copy stage of a plan under `ionice -c3` (the idle
// class), as Incus and admins run bulk copies; a truncate after it is not.
func ioniced(plan func(Job) Plan) func(Job) Plan {
	return func(j Job) Plan {
		p := plan(j)
		for i, argv := range p[0] {
			p[0][i] = append([]string{"ionice", "-c3"}, argv...)
		}
		return p
	}
}

// setupBusy is the file workload plus the foreground's file beside it.
func setupBusy(e *Env, src *Source) (*Pair, error) {
	p, err := setupFile(e, src)
	if err != nil {
		return nil, err
	}
	fg := filepath.Join(e.Dir, "foreground.bin")
	if err := writeSource(fg, randomContent{seed: 77}, fgSize); err != nil {
		return nil, err
	}
	p.Foreground = fg
	close := p.Close
	p.Close = func() { close(); os.Remove(fg) }
	return p, nil
}

// fgResult is what the foreground did during one run.
type fgResult struct {
	IOPS  float64 `json:"iops"`
	P50us float64 `json:"p50_us"`
	P99us float64 `json:"p99_us"`
}

// foreground is a running fio.
type foreground struct {
	cmd    *exec.Cmd
	out    string
	stderr bytes.Buffer // what fio said, for an error
}

// startForeground starts fio on the pair's foreground file and returns
// once its ramp is over.
func startForeground(ctx context.Context, p *Pair) (*foreground, error) {
	path, err := lookPath("fio")
	if err != nil {
		return nil, fmt.Errorf("the foreground needs fio (apt-get install fio): %w", err)
	}
	f := &foreground{out: p.Foreground + ".json"}
	f.cmd = exec.CommandContext(ctx, path, "--name=foreground", "--filename="+p.Foreground,
		"--size="+strconv.Itoa(fgSize), "--rw=randread", "--bs=4k", "--iodepth=4", "--direct=1",
		"--ioengine=libaio", "--time_based", "--runtime=3600", "--ramp_time="+fgRamp.String(),
		"--output-format=json", "--output="+f.out)
	f.cmd.Cancel = func() error { return f.cmd.Process.Signal(syscall.SIGINT) }
	f.cmd.Stderr = &f.stderr
	f.cmd.WaitDelay = 10 * time.Second
	if err := f.cmd.Start(); err != nil {
		return nil, err
	}
	waitReading(f.cmd.Process.Pid, 10*time.Second)
	time.Sleep(fgRamp + 100*time.Millisecond)
	return f, nil
}

// waitReading waits until a process that fio started (its job) has read
// from storage, at most limit. fio defers a SIGINT that comes while it
// sets its job up, then never writes its figures: the foreground of a
// copy shorter than fio's start (a -quick run) came back empty.
func waitReading(pid int, limit time.Duration) {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		for _, kid := range strings.Fields(string(kids)) {
			io, _ := os.ReadFile("/proc/" + kid + "/io")
			for _, line := range strings.Split(string(io), "\n") {
				if n, ok := strings.CutPrefix(line, "read_bytes: "); ok && n != "0" {
					return
				}
			}
		}
	}
}

// stop ends fio (SIGINT: it prints its figures and exits) and reads them.
func (f *foreground) stop() (*fgResult, error) {
	f.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- f.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		f.cmd.Process.Kill()
		<-done
	}
	defer os.Remove(f.out)
	b, err := os.ReadFile(f.out)
	if err != nil {
		return nil, fmt.Errorf("foreground fio: %w (%s)", err, strings.TrimSpace(f.stderr.String()))
	}
	res, err := parseForeground(b)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, strings.TrimSpace(f.stderr.String()))
	}
	return res, nil
}

// parseForeground reads fio's JSON: the read IOPS and the completion
// latency percentiles of its one job.
func parseForeground(b []byte) (*fgResult, error) {
	var fo struct {
		Jobs []struct {
			Read struct {
				IOPS float64 `json:"iops"`
				Clat struct {
					Percentile map[string]float64 `json:"percentile"`
				} `json:"clat_ns"`
			} `json:"read"`
		} `json:"jobs"`
	}
	if i := slices.Index(b, '{'); i > 0 {
		b = b[i:]
	}
	if err := json.Unmarshal(b, &fo); err != nil || len(fo.Jobs) != 1 {
		return nil, fmt.Errorf("foreground fio JSON: %v (%d jobs)", err, len(fo.Jobs))
	}
	r := fo.Jobs[0].Read
	return &fgResult{IOPS: r.IOPS, P50us: r.Clat.Percentile["50.000000"] / 1e3, P99us: r.Clat.Percentile["99.000000"] / 1e3}, nil
}

// copyRuns leaves out the runs that copy nothing (fg-alone): they have
// no MB/s for a chart or a summary.
func copyRuns(runs []*Run) []*Run {
	var out []*Run
	for _, r := range runs {
		if t, err := toolByName(r.Tool); err != nil || !t.NoCopy {
			out = append(out, r)
		}
	}
	return out
}

// busyRow is one tool's line of the busy table: medians over rounds.
type busyRow struct {
	Tool      string
	OK, Runs  int
	MBps      float64 // the copy's, 0 for fg-alone
	OfAlone   float64 // MB/s against ringcp-alone in the same round
	IOPS      float64 // the foreground's
	IOPSShare float64 // the foreground's IOPS against fg-alone's in the same round
	P99us     float64
	P99xAlone float64 // p99 against fg-alone's in the same round
	Cmd       string
}

// summarizeBusy folds the busy workload's runs into rows, in busyTools'
// order.
func summarizeBusy(runs []*Run) []*busyRow {
	alone, fgAlone, fgAloneIOPS := map[int]float64{}, map[int]float64{}, map[int]float64{}
	for _, r := range runs {
		switch {
		case r.Err != nil:
		case r.Tool == "ringcp-alone":
			alone[r.Round] = mbps(r.Size, r.Wall)
		case r.Tool == "fg-alone" && r.Foreground != nil:
			fgAlone[r.Round], fgAloneIOPS[r.Round] = r.Foreground.P99us, r.Foreground.IOPS
		}
	}
	var rows []*busyRow
	for _, name := range busyTools {
		row := &busyRow{Tool: name, MBps: math.NaN(), OfAlone: math.NaN(), IOPS: math.NaN(), IOPSShare: math.NaN(), P99us: math.NaN(), P99xAlone: math.NaN()}
		var speed, of, iops, share, p99, x []float64
		for _, r := range runs {
			if r.Tool != name {
				continue
			}
			row.Runs++
			row.Cmd = r.Cmd
			if r.Err != nil {
				continue
			}
			row.OK++
			if name != "fg-alone" {
				speed = append(speed, mbps(r.Size, r.Wall))
				if a, ok := alone[r.Round]; ok {
					of = append(of, mbps(r.Size, r.Wall)/a)
				}
			}
			if fg := r.Foreground; fg != nil {
				iops, p99 = append(iops, fg.IOPS), append(p99, fg.P99us)
				if a, ok := fgAlone[r.Round]; ok && a > 0 {
					x = append(x, fg.P99us/a)
				}
				if a, ok := fgAloneIOPS[r.Round]; ok && a > 0 {
					share = append(share, fg.IOPS/a)
				}
			}
		}
		if row.Runs == 0 {
			continue
		}
		row.MBps, row.OfAlone, row.IOPS, row.P99us, row.P99xAlone = medianOr(speed), medianOr(of), medianOr(iops), medianOr(p99), medianOr(x)
		row.IOPSShare = medianOr(share)
		rows = append(rows, row)
	}
	return rows
}
