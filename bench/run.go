package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Run is one tool's one copy, checked.
type Run struct {
	Workload string
	Tool     string
	Round    int // 1-based; 0 for calibration and sweep points
	Order    int // position in its round
	Cmd      string
	Size     int64
	Wall     time.Duration // process start to DST durable (fio: see parseFio)
	User     time.Duration // of the tool's processes and their children
	Sys      time.Duration
	MaxRSS   int64 // bytes; concurrent processes add up
	Err      error // nil, errWrong (bad copy) or why the run failed
	details
}

// details is what a run learned besides its times, typed; runs.csv keeps
// it as one JSON cell, so -replot rebuilds a run from the CSV alone.
type details struct {
	// Ringcp is what ringcp said of its copy (--json): the engine, block
	// size and depth it chose, and its account of the bytes. Nil for the
	// other tools.
	Ringcp *ringcpReport `json:"ringcp,omitempty"`
	// Fio is what a ceiling run measured; nil for the tools that copy.
	Fio *fioResult `json:"fio,omitempty"`
	// DstAlloc and SrcAlloc are DST's st_blocks×512 after the copy and
	// SRC's, where the workload measures them (else 0).
	DstAlloc int64 `json:"dst_alloc,omitempty"`
	SrcAlloc int64 `json:"src_alloc,omitempty"`
	// Sweep is the grid point of a sweep run (BS 0: ringcp's defaults).
	Sweep *sweepPoint `json:"sweep,omitempty"`
	// Trust is what a trust row measured (trust.go).
	Trust *trustDetail `json:"trust,omitempty"`
	// Foreground is what the busy workload's foreground did meanwhile.
	Foreground *fgResult `json:"foreground,omitempty"`
	// MemPeak is the peak memory of the run's memory cgroup, page cache
	// included (the cdi workloads, cdi.go).
	MemPeak int64 `json:"mem_peak,omitempty"`
	// DstWritten is what DST's device was sent to write by the run
	// (Pair.Written: the sync workloads); 0 when not measured.
	DstWritten int64 `json:"dst_written,omitempty"`
	// DstSize is the length of the image a tool wrote (Pair.ImageDst;
	// DstAlloc is then its allocation).
	DstSize int64 `json:"dst_size,omitempty"`
}

// Verdict is the run's one-word outcome.
func (r *Run) Verdict() string {
	switch {
	case r.Err == nil:
		return "ok"
	case errors.Is(r.Err, errWrong):
		return "WRONG"
	}
	return "FAILED"
}

// CPU is user plus system time.
func (r *Run) CPU() time.Duration { return r.User + r.Sys }

// runOne makes DST new, drops the page cache, runs the tool's plan, makes
// DST durable, and checks the copy; where the workload asks, it records
// DST's allocation next to SRC's. The timed interval is the plan plus the
// fdatasync; resetting, dropping, checking and measuring are outside it.
func (b *bench) runOne(ctx context.Context, w *Workload, t *Tool, j Job, round, order int) *Run {
	r := &Run{Workload: w.Name, Tool: t.Name, Round: round, Order: order, Size: j.Size}
	if err := j.Reset(); err != nil {
		r.Err = fmt.Errorf("reset DST: %w", err)
		return r
	}
	b.env.dropCaches()
	plan := t.Plan(j)
	r.Cmd = planString(plan)
	var fg *foreground
	if w.Foreground && !t.NoForeground {
		var err error
		if fg, err = startForeground(ctx, j.Pair); err != nil {
			r.Err = err
			return r
		}
	}
	start := time.Now()
	outs, err := b.execPlan(ctx, plan, r)
	if err == nil && !t.Ceiling && !t.NoCopy {
		err = forCopies(j, t, func(p *Pair) error { return p.sync() })
	}
	r.Wall = time.Since(start)
	if j.Written != nil && err == nil {
		if r.DstWritten, err = j.Written(); err != nil {
			err = fmt.Errorf("bytes written to DST: %w", err)
		}
	}
	if fg != nil {
		var fgErr error
		if r.Foreground, fgErr = fg.stop(); err == nil {
			err = fgErr
		}
	}
	if t.Ceiling {
		r.Fio = &fioResult{Shape: j.Fio}
	}
	if err == nil && t.Parse != nil {
		err = t.Parse(outs, r)
	}
	if err == nil && !t.Ceiling && !t.NoCopy {
		err = forCopies(j, t, func(p *Pair) error { return p.check() })
	}
	if j.ImageDst && err == nil {
		if r.DstSize, r.DstAlloc, err = imageSize(j.Dst); err != nil {
			err = fmt.Errorf("image size: %w", err)
		}
	}
	if j.SrcAlloc > 0 && !t.Ceiling {
		if alloc, aerr := allocBytes(j.Dst); aerr == nil {
			r.DstAlloc, r.SrcAlloc = alloc, j.SrcAlloc
		}
	}
	r.Err = err
	return r
}

// wrapped resolves the program a wrapper runs (ionice -c3 PROG ...; the
// cdi workloads' sh -c 'join a cgroup; exec' ... env ... ringcp), as
// execPlan resolves argv[0]: ringcp is a binary the bench built, on no
// PATH.
func (b *bench) wrapped(argv []string) []string {
	switch {
	case argv[0] == "ionice" && len(argv) >= 3:
		if path, ok := b.bins[argv[2]]; ok {
			argv = append(slices.Clone(argv[:2]), append([]string{path}, argv[3:]...)...)
		}
	case argv[0] == "sh":
		path, ok := b.bins["ringcp"]
		for i := 1; ok && i < len(argv); i++ {
			if argv[i] == "ringcp" {
				argv = slices.Clone(argv)
				argv[i] = path
			}
		}
	}
	return argv
}

// execPlan runs the stages in turn and the commands of a stage together,
// adding their wait4 rusage into r: CPU adds up everywhere; peak RSS adds
// up within a stage (those processes coexist) and takes the max across.
// It returns each command's stdout, in plan order.
func (b *bench) execPlan(ctx context.Context, plan Plan, r *Run) ([][]byte, error) {
	var outs [][]byte
	for _, stage := range plan {
		cmds := make([]*exec.Cmd, len(stage))
		errs := make([]*bytes.Buffer, len(stage))
		for i, argv := range stage {
			path, ok := b.bins[argv[0]]
			if !ok {
				return outs, fmt.Errorf("%s: not found", argv[0])
			}
			c := exec.CommandContext(ctx, path, b.wrapped(argv)[1:]...)
			c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
			c.WaitDelay = 5 * time.Second
			c.Stdout, errs[i] = new(bytes.Buffer), new(bytes.Buffer)
			c.Stderr = errs[i]
			if err := c.Start(); err != nil {
				return outs, err
			}
			cmds[i] = c
		}
		var stageErr error
		var rss int64
		for i, c := range cmds {
			err := c.Wait()
			if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
				r.User += time.Duration(ru.Utime.Nano())
				r.Sys += time.Duration(ru.Stime.Nano())
				rss += ru.Maxrss << 10 // KiB on Linux
			}
			outs = append(outs, c.Stdout.(*bytes.Buffer).Bytes())
			if err != nil && stageErr == nil {
				stageErr = fmt.Errorf("%s: %v: %s", stage[i][0], err, lastLines(errs[i].Bytes(), 3))
			}
		}
		r.MaxRSS = max(r.MaxRSS, rss)
		if stageErr != nil {
			return outs, stageErr
		}
	}
	return outs, nil
}

// planString renders a plan as one shell line: `&` between the commands
// of a stage, `&&` between stages.
func planString(p Plan) string {
	var stages []string
	for _, st := range p {
		var cmds []string
		for _, argv := range st {
			cmds = append(cmds, strings.Join(argv, " "))
		}
		if len(cmds) > 1 {
			stages = append(stages, "{ "+strings.Join(cmds, " & ")+" & wait; }")
		} else {
			stages = append(stages, cmds[0])
		}
	}
	return strings.Join(stages, " && ")
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// rotate returns ts started at position k, so that over the rounds every
// tool runs early and late (the VM is noisy and drifts).
func rotate[T any](ts []T, k int) []T {
	if len(ts) == 0 {
		return nil
	}
	k %= len(ts)
	return append(append([]T(nil), ts[k:]...), ts[:k]...)
}
