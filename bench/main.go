// Command bench runs ringcp side by side with the tools its users run today
// (dd, four parallel dd's, sgp_dd, qemu-img convert, nbdcopy, cp) and with
// fio's read+write ceiling, and prints medians as a markdown table.
//
//	go run ./bench                       # 4 GiB, 5 rounds, file and blockdev; 16 GiB sparse image;
//	                                     # the 4 GiB as 4 jobs at once (jobs-file, jobs-blockdev)
//	go run ./bench -size 1G -rounds 3
//	go run ./bench -workloads sparse     # the sparse image alone
//	go run ./bench -workloads jobs-file,jobs-blockdev  # ringcp --jobs against 4 processes
//	go run ./bench -quick                # CI: one small round, copies checked
//	go run ./bench -sweep                # plus ringcp's block size x depth grid
//
// The bench is a Go module of its own (bench/go.mod): its charts need
// gonum.org/v1/plot, which a program importing the library must not have in
// its module graph. The go.work at the repository root joins the two, so
// the commands above work from the root, and `go test ./... ./bench/...`
// tests both. It builds the ringcp of the checkout it sits in.
//
// It runs as root (loop devices, drop_caches), needs no network, and says
// which peers are missing and which Debian package brings each. Exit status:
// 0 every copy was right, 1 some copy failed or was wrong (or, with -quick,
// ringcp itself could not be built), 2 the bench could not run, 130
// interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/ringcp/ringcp/internal/units"
)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) || errors.Is(err, errDone) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := runBench(ctx, cfg, os.Stdout, os.Stderr)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "bench: interrupted; loop devices detached, work files removed")
		os.Exit(130)
	case err != nil:
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	case res.Bad > 0:
		fmt.Fprintf(os.Stderr, "bench: %d run(s) failed or made a wrong copy\n", res.Bad)
		os.Exit(1)
	case res.NoRingcp && cfg.Quick:
		// CI runs -quick to check ringcp's copies: without ringcp it
		// checked nothing that matters.
		fmt.Fprintln(os.Stderr, "bench: ringcp could not be built or run; see \"missing\" above")
		os.Exit(1)
	}
}

// errDone is parseFlags saying that a flag (-list, -replot) did all there
// was to do.
var errDone = errors.New("done")

func parseFlags(args []string) (Config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	size := fs.String("size", "4G", "bytes per copy, as ringcp reads sizes (K/M/G/T and KiB/MiB/GiB binary, KB/MB/GB decimal), and +N for an odd tail, e.g. 64M+12345")
	sparseSize := fs.String("sparse-size", "16G", "apparent size of the sparse workload's image (1/16 of it data)")
	rounds := fs.Int("rounds", 5, "rounds; each runs every tool once, in a rotated order")
	workDir := fs.String("workdir", "/var/tmp/ringcp-bench", "scratch directory on the filesystem under test (not tmpfs)")
	out := fs.String("out", "", "results directory for CSV, chart and table (default: bench/results of the repository; none in -quick)")
	wls := fs.String("workloads", strings.Join(workloadNames(false), ","), "comma-separated workloads (also: "+strings.Join(optionalWorkloads(), ",")+"; -quick runs them all)")
	busyRate := fs.String("busy-rate", "200M", "the busy workload's rate cap, for ringcp --max-rate and qemu-img convert -r")
	busyWindows := fs.String("busy-windows", "", "also run the busy workloads with ringcp at these fixed windows, BLOCKSIZE:QUEUEDEPTH,... (e.g. 256K:1,1M:2,8M:8): the frontier a controller works within")
	tls := fs.String("tools", "", "comma-separated tools to run (default: all); see -list")
	ringcp := fs.String("ringcp", "", "ringcp binary to bench (default: go build ringcp's module, the repository root)")
	ringcpRev := fs.String("ringcp-rev", "", "build ringcp from this commit of the repository instead of the work tree")
	quick := fs.Bool("quick", false, "CI mode: -size 64M+12345, -sparse-size 256M+4321, one round, every workload, no ceiling; fails if any copy is wrong")
	ceiling := fs.Bool("ceiling", true, "measure fio's concurrent read+write ceiling")
	sweep := fs.Bool("sweep", false, "also sweep ringcp's block size x queue depth on the file workload (slow)")
	sweepBS := fs.String("sweep-bs", joinSizes(defaultSweepBS), "sweep block sizes")
	sweepQD := fs.String("sweep-qd", joinInts(defaultSweepQD), "sweep queue depths")
	sweepSize := fs.String("sweep-size", "", "bytes per sweep copy (default: -size)")
	sweepRounds := fs.Int("sweep-rounds", 1, "rounds over the sweep grid, each in a fresh random order")
	seed := fs.Uint64("seed", 0, "source data seed (default: random)")
	keep := fs.Bool("keep", false, "keep the work files")
	list := fs.Bool("list", false, "list tools and workloads, say which tools are missing, and exit")
	replotDir := fs.String("replot", "", "redraw chart.png of a results directory from its runs.csv, and exit")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg := Config{Rounds: *rounds, WorkDir: *workDir, OutDir: *out, Ringcp: *ringcp, RingcpRev: *ringcpRev,
		Quick: *quick, Ceiling: *ceiling, Seed: *seed, Keep: *keep}
	if cfg.Quick {
		if !set["size"] {
			*size = "64M+12345"
		}
		if !set["sparse-size"] {
			// Small, with an odd tail, like -size: the last partial
			// sector next to a hole is where sparse copies go wrong.
			*sparseSize = "256M+4321"
		}
		if !set["rounds"] {
			cfg.Rounds = 1
		}
		if !set["workloads"] {
			*wls = strings.Join(workloadNames(true), ",")
		}
	} else if cfg.OutDir == "" {
		cfg.OutDir = defaultOutDir()
	}
	var err error
	if cfg.Size, err = parseSize(*size); err != nil || cfg.Size <= 0 {
		return cfg, fmt.Errorf("-size %q: want a positive size", *size)
	}
	if cfg.SparseSize, err = parseSize(*sparseSize); err != nil || cfg.SparseSize <= 0 {
		return cfg, fmt.Errorf("-sparse-size %q: want a positive size", *sparseSize)
	}
	if cfg.Rounds < 1 {
		return cfg, fmt.Errorf("-rounds must be at least 1")
	}
	if cfg.BusyRate, err = parseSize(*busyRate); err != nil || cfg.BusyRate <= 0 {
		return cfg, fmt.Errorf("-busy-rate %q: want a positive size", *busyRate)
	}
	cfg.Workloads = splitList(*wls)
	for _, w := range cfg.Workloads {
		if _, err := findWorkload(w); err != nil {
			return cfg, err
		}
	}
	if err := addWindowTools(*busyWindows); err != nil {
		return cfg, err
	}
	cfg.Tools = splitList(*tls)
	for _, t := range cfg.Tools {
		if _, err := toolByName(t); err != nil {
			return cfg, err
		}
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64() | 1
	}
	cfg.Sweep = sweepConfig{On: *sweep, Rounds: *sweepRounds}
	if cfg.Sweep.BS, err = parseSizes(*sweepBS); err != nil {
		return cfg, fmt.Errorf("-sweep-bs: %w", err)
	}
	if cfg.Sweep.QD, err = parseInts(*sweepQD); err != nil {
		return cfg, fmt.Errorf("-sweep-qd: %w", err)
	}
	if *sweepSize != "" {
		if cfg.Sweep.Size, err = parseSize(*sweepSize); err != nil {
			return cfg, fmt.Errorf("-sweep-size: %w", err)
		}
	}
	if *list {
		listTools(cfg)
		return cfg, errDone
	}
	if *replotDir != "" {
		if err := replot(*replotDir); err != nil {
			return cfg, err
		}
		return cfg, errDone
	}
	return cfg, nil
}

// defaultOutDir is bench/results of the repository when run inside it.
func defaultOutDir() string {
	if root, err := moduleRoot(); err == nil {
		return filepath.Join(root, "bench", "results")
	}
	return "ringcp-bench-results"
}

// listTools prints the tools table and what each needs, for -list.
func listTools(cfg Config) {
	fmt.Println("workloads:")
	for _, w := range workloads {
		fmt.Printf("  %-10s %s\n", w.Name, w.Desc)
	}
	fmt.Println("tools:")
	for _, t := range tools {
		state := "found"
		for _, prog := range t.Needs {
			if prog == "ringcp" {
				if cfg.Ringcp == "" {
					state = "built from this checkout at run time"
				}
				continue
			}
			if _, err := lookPath(prog); err != nil {
				state = fmt.Sprintf("missing %s (apt-get install %s)", prog, debianPkg[prog])
				break
			}
		}
		fmt.Printf("  %-12s %s\n", t.Name, state)
	}
}

// workloadNames lists the workloads, the optional ones too when all.
func workloadNames(all bool) []string {
	var ns []string
	for _, w := range workloads {
		if (all && !w.NotQuick) || !w.Optional {
			ns = append(ns, w.Name)
		}
	}
	return ns
}

func optionalWorkloads() []string {
	var ns []string
	for _, w := range workloads {
		if w.Optional {
			ns = append(ns, w.Name)
		}
	}
	return ns
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseSize reads a size as ringcp does (units.ParseSize: K, M, G and
// KiB, MiB, GiB binary; KB, MB, GB decimal) and sums terms joined by +,
// for an odd tail: 64M+12345.
func parseSize(s string) (int64, error) {
	var total int64
	for _, term := range strings.Split(s, "+") {
		n, err := units.ParseSize(term)
		if err != nil {
			return 0, err
		}
		if total > math.MaxInt64-n {
			return 0, fmt.Errorf("%q: %w", s, units.ErrRange)
		}
		total += n
	}
	return total, nil
}

// sizeLabel is parseSize's inverse for headings and directory names:
// units.Exact when n has a binary unit, else the whole part in the largest
// unit below n and the odd tail after a plus: "4GiB", "64MiB+12345".
func sizeLabel(n int64) string {
	for _, u := range []int64{1 << 30, 1 << 20, 1 << 10} {
		if n >= u && n%(1<<10) != 0 {
			return units.Exact(n/u*u) + "+" + strconv.FormatInt(n%u, 10)
		}
	}
	return units.Exact(n)
}

func parseSizes(s string) ([]int64, error) {
	var out []int64
	for _, f := range splitList(s) {
		n, err := parseSize(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func joinSizes(ns []int64) string {
	var ss []string
	for _, n := range ns {
		ss = append(ss, units.Exact(n))
	}
	return strings.Join(ss, ",")
}

func joinInts(ns []int) string {
	var ss []string
	for _, n := range ns {
		ss = append(ss, strconv.Itoa(n))
	}
	return strings.Join(ss, ",")
}
