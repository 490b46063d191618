package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ringcp/ringcp/copier"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// config is the parsed command line.
type config struct {
	opts     copier.Options
	json     bool
	verbose  bool
	version  bool
	progress progressConfig
	jobs     string // --jobs FILE: the batch's list, "" for one copy
	parallel int
	sync     syncConfig // ringcp sync's own flags (changedflags.go)
}

// parseArgs parses flags and operands into a config. Errors are one line,
// fit for "ringcp: <error>", and are usage errors (exit 2).
func parseArgs(args []string, stdout io.Writer) (config, error) {
	cfg, err := parseFlags(args, stdout)
	if err != nil && !errors.Is(err, errHelp) {
		err = &usageError{err}
	}
	return cfg, err
}

// parseFlags reads the command line: the flags of optionFlags straight
// into cfg.opts, whose values copier checks (Prepare), and the command's
// own flags, which it checks here.
func parseFlags(args []string, stdout io.Writer) (config, error) {
	var cfg config
	fs, help := copyFlags(&cfg)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if *help {
		fmt.Fprint(stdout, usageHead+flagHelp(fs)+usageTail)
		return cfg, errHelp
	}
	if cfg.version {
		return cfg, nil
	}
	cfg.opts.Src, cfg.opts.Dst = fs.Arg(0), fs.Arg(1)
	if err := checkOperands(fs, cfg.jobs); err != nil {
		return cfg, err
	}
	if cfg.jobs == "" {
		dst, err := intoDirectory(cfg.opts.Src, cfg.opts.Dst)
		if err != nil {
			return cfg, err
		}
		cfg.opts.Dst = dst
	}
	if err := checkProgress(cfg.progress, fs.Changed("progress-interval")); err != nil {
		return cfg, err
	}
	if cfg.json && sharesStdout(cfg.progress) {
		return cfg, &flagError{flag: "--progress-fd", err: fmt.Errorf("--progress %s --progress-fd %d with --json: the progress and the --json object would share stdout; give another descriptor", cfg.progress.mode, cfg.progress.fd)}
	}
	if cfg.opts.Dst == "-" && sharesStdout(cfg.progress) {
		return cfg, &flagError{flag: "--progress-fd", err: fmt.Errorf("--progress %s --progress-fd %d with DST -: the progress would land in the copy on stdout; give another descriptor", cfg.progress.mode, cfg.progress.fd)}
	}
	// stdout holds the --json object alone, or the copy (DST -): the
	// qemu records go to stderr then.
	cfg.progress.json = cfg.json || cfg.opts.Dst == "-"
	cfg.sync.noteSyncFlags(fs)
	return cfg, nil
}

// copyFlags defines the command's flags, bound to cfg.
func copyFlags(cfg *config) (*pflag.FlagSet, *bool) {
	fs := newFlagSet("ringcp")
	defineOptionFlags(fs, &cfg.opts, "block-size", "queue-depth", "engine", "direct", "sync", "src-offset", "dst-offset",
		"length", "sparse", "zero-block", "target-is-zero", "offload")
	fs.BoolVar(&cfg.json, "json", false, "print one JSON object on stdout with the outcome, whatever it is (refusals included)")
	fs.StringVar(&cfg.progress.mode, "progress", "auto", choiceList(progressModes)+". auto: a line on stderr when it is a terminal; always: that line anyway; json: one JSON object a line on stderr; qemu: qemu-img -p's (NN.NN/100%) records on stdout; percent: nbdcopy's N/100 lines on stderr")
	fs.DurationVar(&cfg.progress.interval, "progress-interval", 0, "how often progress is written (default 1s; the terminal line 250ms)")
	fs.IntVar(&cfg.progress.fd, "progress-fd", -1, "write progress to this open file descriptor instead")
	fs.BoolVarP(&cfg.verbose, "verbose", "v", false, "explain alignment, block size, direct I/O and engine choices")
	defineOptionFlags(fs, &cfg.opts, "src-format", "dst-format", "size", "expect-checksum", "http-connections", "ca-cert", "client-cert",
		"client-key", "insecure", "header", "bearer-token-file", "s3-endpoint", "s3-region",
		"cluster-size", "compress", "backing", "backing-format", "preallocation")
	fs.StringVar(&cfg.jobs, "jobs", "", "copy each job listed in FILE (a line: SRC DST [range flags]; - reads stdin) in this one process, sharing one buffer budget; the other flags apply to every job")
	fs.IntVar(&cfg.parallel, "parallel", 0, "with --jobs: how many jobs run at once, in the list's order (0: all)")
	defineOptionFlags(fs, &cfg.opts, "verify", "checksum", "resume", "state", "sync-every", "nbd-connections", "nbd-timeout",
		"max-rate", "ioprio", "yield", "force", "extents", "dirty-bitmap", "granule")
	defineSyncFlags(fs, &cfg.sync)
	fs.BoolVar(&cfg.version, "version", false, "print the version, and whether io_uring is usable here (with --json: as JSON)")
	help := fs.BoolP("help", "h", false, "show this help")
	onlyOnce(fs)
	return fs, help
}

// newFlagSet is a flag set that reports its errors rather than printing
// them, in the order its flags are defined.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// checkProgress refuses a format it does not know, an interval that is
// not positive and a descriptor that is not open for writing, before
// anything is copied.
func checkProgress(pc progressConfig, intervalSet bool) error {
	if !contains(progressModes, pc.mode) {
		return fmt.Errorf("--progress %q: want one of %s", pc.mode, oneOf(progressModes))
	}
	if intervalSet && pc.interval <= 0 {
		return fmt.Errorf("--progress-interval %v: must be more than 0", pc.interval)
	}
	if pc.fd < 0 {
		return nil
	}
	flags, err := unix.FcntlInt(uintptr(pc.fd), unix.F_GETFL, 0)
	if err != nil {
		return fmt.Errorf("--progress-fd %d: not an open file descriptor (%v)", pc.fd, err)
	}
	if flags&unix.O_ACCMODE == unix.O_RDONLY {
		return fmt.Errorf("--progress-fd %d: open for reading only", pc.fd)
	}
	return nil
}

// sharesStdout says whether progress would be written to stdout, which
// --json keeps for its one object: --progress-fd 1, or a descriptor open
// on the same file or pipe.
func sharesStdout(pc progressConfig) bool {
	if pc.fd < 0 || pc.mode == progressNone {
		return false
	}
	if pc.fd == 1 {
		return true
	}
	var a, b unix.Stat_t
	return unix.Fstat(pc.fd, &a) == nil && unix.Fstat(1, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

// wantsJSON says whether a command line that could not be read asked for
// --json: then the refusal is printed as JSON too.
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true":
			return true
		}
	}
	return false
}

// oneOf lists values as people say them: "auto, uring or pool".
func oneOf(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// choiceList renders a flag's values for its help: "auto|uring|pool".
func choiceList(values []string) string { return strings.Join(values, "|") }

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// onlyOnce makes a flag given twice with different values an error. pflag
// keeps the last (--engine pool --engine uring runs io_uring), and a tool
// trusted with whole disks must not guess which one was meant. The same
// value twice is fine: scripts repeat their defaults.
func onlyOnce(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		f.Value = &onceValue{Value: f.Value}
	})
}

// onceValue wraps a flag's value and remembers the first value given.
type onceValue struct {
	pflag.Value
	first string
	set   bool
}

func (v *onceValue) Set(s string) error {
	if r, ok := v.Value.(interface{ Repeatable() bool }); ok && r.Repeatable() {
		return v.Value.Set(s)
	}
	if v.set && s != v.first {
		return fmt.Errorf("given twice with different values (%q, then %q)", v.first, s)
	}
	v.set, v.first = true, s
	return v.Value.Set(s)
}

// IsBoolFlag forwards to a bool flag's value, which pflag asks to render
// the help.
func (v *onceValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
