package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ringcp/ringcp/internal/units"
)

// Config is one bench run's settings, filled from flags (main.go) or by a
// test.
type Config struct {
	Size       int64
	SparseSize int64 // the sparse workload's image
	Rounds     int
	WorkDir    string
	OutDir     string // "" writes no CSV or charts
	Workloads  []string
	Tools      []string // empty: every tool
	Ringcp     string   // binary to bench; "" builds the repository's
	RingcpRev  string   // with Ringcp "", build from this commit instead of the work tree
	Quick      bool     // correctness only: no ceiling, no sweep
	Ceiling    bool
	Seed       uint64
	Keep       bool
	Sweep      sweepConfig
	BusyRate   int64 // the busy workload's rate cap (ringcp --max-rate, qemu-img -r)
}

// bench is the state of one run.
type bench struct {
	cfg     Config
	env     *Env
	bins    map[string]string // program name -> path
	found   []string          // "program version" of each present program
	present []*Tool
	missing []string          // "tool: why", for the report
	skipped []string          // "workload: why"
	src     *Source           // the run's random source, written on first use
	about   map[string]string // workload -> its source's About
	runs    []*Run
	sweep   []*Run
	shapes  map[string]fioShape // workload -> calibrated ceiling
	started time.Time
}

// Result is what a bench run hands back to main or a test.
type Result struct {
	Runs     []*Run
	Missing  []string
	Skipped  []string
	Bad      int  // runs that failed or made a wrong copy
	NoRingcp bool // ringcp was asked for but could not be built or run
}

// runBench runs everything cfg asks for, prints the markdown report on out,
// progress on log, writes CSV and charts to cfg.OutDir, and undoes its
// changes to the machine before returning, also when ctx is cancelled.
func runBench(ctx context.Context, cfg Config, out, log io.Writer) (*Result, error) {
	env, err := newEnv(cfg.WorkDir, cfg.Keep, log)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	b := &bench{cfg: cfg, env: env, shapes: map[string]fioShape{}, about: map[string]string{}, started: time.Now()}
	if need, free := b.spaceNeeded(), freeBytes(env.Dir); free < need+need/16 {
		return nil, fmt.Errorf("%s has %s free, the run needs about %s",
			cfg.WorkDir, units.Format(free), units.Format(need))
	}
	b.discover()
	env.Ringcp = b.bins["ringcp"]
	for _, m := range b.missing {
		env.logf("missing %s", m)
	}
	for _, name := range cfg.Workloads {
		w, err := findWorkload(name)
		if err != nil {
			return nil, err
		}
		if err := b.runWorkload(ctx, w); err != nil {
			return nil, err
		}
	}
	if cfg.Sweep.On && !cfg.Quick {
		if err := b.runSweep(ctx); err != nil {
			return nil, err
		}
	}
	if err := b.report(out); err != nil {
		return nil, err
	}
	res := &Result{Runs: b.runs, Missing: b.missing, Skipped: b.skipped}
	if _, ok := b.bins["ringcp"]; !ok && (len(cfg.Tools) == 0 || slices.Contains(cfg.Tools, "ringcp")) {
		res.NoRingcp = true
	}
	for _, r := range append(slices.Clone(b.runs), b.sweep...) {
		if r.Err != nil {
			res.Bad++
		}
	}
	return res, nil
}

// spaceNeeded is the most disk the run takes at once: the random SRC and
// one DST (file or loop image) when a workload or the sweep copies it, the
// sweep's own source, and the most a workload with its own source takes
// (those run one after another, but the random SRC stays meanwhile).
func (b *bench) spaceNeeded() int64 {
	var need, own int64
	for _, name := range b.cfg.Workloads {
		w, err := findWorkload(name)
		switch {
		case err != nil:
		case w.Source == nil && w.Space != nil:
			need = max(need, 2*b.cfg.Size+w.Space(&b.cfg))
		case w.Source == nil:
			need = max(need, 2*b.cfg.Size)
		case w.Space != nil:
			own = max(own, w.Space(&b.cfg))
		}
	}
	if b.cfg.Sweep.On && !b.cfg.Quick {
		need = 2*b.cfg.Size + b.cfg.Sweep.Size
	}
	return need + own
}

// mainSource is the run's random source, written the first time a
// workload (or the sweep) asks for it: a run of workloads that bring their
// own source never writes it.
func (b *bench) mainSource() (*Source, error) {
	if b.src != nil {
		return b.src, nil
	}
	src := &Source{
		Path:    filepath.Join(b.env.Dir, "src.bin"),
		Size:    b.cfg.Size,
		Content: randomContent{seed: b.cfg.Seed},
	}
	b.env.logf("writing %s of random data (seed %d) to %s", sizeLabel(src.Size), b.cfg.Seed, src.Path)
	if err := writeSource(src.Path, src.Content, src.Size); err != nil {
		return nil, err
	}
	b.src = src
	return src, nil
}

// sourceFor is the workload's own source, made now, or the run's.
func (b *bench) sourceFor(w *Workload) (*Source, error) {
	if w.Source == nil {
		return b.mainSource()
	}
	src, err := w.Source(b.env, &b.cfg)
	if err != nil {
		return nil, err
	}
	b.about[w.Name] = src.About
	return src, nil
}

// discover finds every program the tools table needs and sorts the tools
// into present and missing (with the Debian package that brings each).
func (b *bench) discover() {
	b.bins = map[string]string{}
	why := map[string]string{}
	for _, t := range tools {
		if len(b.cfg.Tools) > 0 && !slices.Contains(b.cfg.Tools, t.Name) {
			continue
		}
		if t.Ceiling && (b.cfg.Quick || !b.cfg.Ceiling) {
			continue
		}
		if t.Workloads != nil && !slices.ContainsFunc(t.Workloads, func(w string) bool {
			return slices.Contains(b.cfg.Workloads, w)
		}) {
			continue
		}
		var lack []string
		for _, prog := range t.Needs {
			if _, ok := b.bins[prog]; ok {
				continue
			}
			if _, ok := why[prog]; !ok {
				path, err := b.locate(prog)
				if err == nil {
					b.bins[prog] = path
					if _, peer := versionArg[prog]; peer || prog == "ringcp" {
						b.found = append(b.found, b.version(prog, path))
					}
					continue
				}
				why[prog] = err.Error()
			}
			lack = append(lack, why[prog])
		}
		if lack != nil {
			b.missing = append(b.missing, t.Name+": "+strings.Join(lack, "; "))
			continue
		}
		b.present = append(b.present, &t)
	}
}

func (b *bench) locate(prog string) (string, error) {
	if prog == "ringcp" {
		return findRingcp(b.cfg.Ringcp, b.cfg.RingcpRev, b.env.Dir)
	}
	path, err := lookPath(prog)
	if err != nil {
		return "", fmt.Errorf("%s not installed (apt-get install %s)", prog, debianPkg[prog])
	}
	return path, nil
}

// version names prog's version in one line: the first line of its
// --version (or the like), and for ringcp the commit it was built from.
func (b *bench) version(prog, path string) string {
	if prog == "ringcp" {
		if b.cfg.Ringcp != "" {
			return "ringcp " + path
		}
		root, _ := moduleRoot()
		args := []string{"-C", root, "describe", "--always", "--dirty"}
		if b.cfg.RingcpRev != "" {
			args = []string{"-C", root, "describe", "--always", b.cfg.RingcpRev}
		}
		out, err := exec.Command("git", args...).Output()
		if err != nil {
			return "ringcp (this checkout)"
		}
		return "ringcp " + strings.TrimSpace(string(out))
	}
	arg, ok := versionArg[prog]
	if !ok {
		return prog
	}
	out, _ := exec.Command(path, arg).CombinedOutput()
	line := firstLines(out, 1)
	if !strings.Contains(line, prog) {
		line = prog + " " + line
	}
	return line
}

// runWorkload sets the workload up, calibrates the ceiling, and runs the
// rounds: every present tool once per round, in an order rotated by one
// from round to round.
func (b *bench) runWorkload(ctx context.Context, w *Workload) error {
	src, err := b.sourceFor(w)
	if err != nil {
		return fmt.Errorf("workload %s: %w", w.Name, err)
	}
	if w.Source != nil && !b.cfg.Keep {
		defer os.Remove(src.Path)
	}
	p, err := w.Setup(b.env, src)
	if errors.Is(err, errSkip) {
		b.skipped = append(b.skipped, w.Name+": "+err.Error())
		b.env.logf("workload %s %v", w.Name, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("workload %s: %w", w.Name, err)
	}
	defer p.Close()
	if p.About != "" {
		b.about[w.Name] = strings.TrimSpace(b.about[w.Name] + " " + p.About)
	}
	ts := b.toolsFor(w)
	var shape fioShape
	if i := slices.IndexFunc(ts, func(t *Tool) bool { return t.Ceiling }); i >= 0 {
		b.env.logf("workload %s: calibrating the fio ceiling", w.Name)
		shape, err = calibrate(ctx, b, w, p)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			b.env.logf("  no ceiling: %v", err)
			ts = slices.Delete(ts, i, i+1)
		}
		b.shapes[w.Name] = shape
	}
	for round := 1; round <= b.cfg.Rounds; round++ {
		for i, t := range rotate(ts, round-1) {
			r := b.runOne(ctx, w, t, Job{Pair: p, Fio: shape, Rate: b.cfg.BusyRate}, round, i+1)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			b.runs = append(b.runs, r)
			b.logRun(r, len(ts))
		}
	}
	return p.Reset()
}

// toolsFor is the present tools that the workload accepts.
func (b *bench) toolsFor(w *Workload) []*Tool {
	var ts []*Tool
	for _, t := range b.present {
		if (w.Tools == nil || slices.Contains(w.Tools, t.Name)) &&
			(t.Workloads == nil || slices.Contains(t.Workloads, w.Name)) {
			ts = append(ts, t)
		}
	}
	return ts
}

func (b *bench) logRun(r *Run, n int) {
	line := fmt.Sprintf("[%s r%d %d/%d] %-12s %7.2fs %6.0f MB/s cpu %5.2fs  %s",
		r.Workload, r.Round, r.Order, n, r.Tool, r.Wall.Seconds(), mbps(r.Size, r.Wall),
		r.CPU().Seconds(), r.Verdict())
	if r.Err != nil {
		line += ": " + r.Err.Error()
	}
	// The foreground's figures are in the log too: the tables are written
	// only at the end, and a long busy run stopped early keeps them here.
	if fg := r.Foreground; fg != nil {
		line += fmt.Sprintf("  fg %.0f IOPS p99 %.0f us", fg.IOPS, fg.P99us)
	}
	b.env.logf("%s", line)
}

func mbps(size int64, d time.Duration) float64 { return units.MBps(size, d.Seconds()) }
