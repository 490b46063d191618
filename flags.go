package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
	"github.com/spf13/pflag"
)

// config is the parsed command line.
type config struct {
	opts     copier.Options
	json     bool
	verbose  bool
	progress string
}

var errHelp = errors.New("help shown")

const usageHead = `Usage: ringcp [flags] SRC DST
       ringcp demo [--size SIZE]
       ringcp rate PID [RATE]   (show or change the rate cap of a running copy)

Copies SRC to DST (regular files or block devices; DST may be a new file)
with io_uring and O_DIRECT, ending with an fdatasync barrier.

Sizes take k/M/G/T/P or Ki/Mi/Gi (x1024) and kB/MB/GB (x1000).

Flags:
`

// sizeFlag is a byte count flag that remembers whether it was given.
type sizeFlag struct {
	v   int64
	set bool
}

func (s *sizeFlag) String() string { return strconv.FormatInt(s.v, 10) }
func (s *sizeFlag) Type() string   { return "SIZE" }
func (s *sizeFlag) Set(v string) error {
	n, err := units.ParseSize(v)
	if err != nil {
		return err
	}
	s.v, s.set = n, true
	return nil
}

// parseArgs parses flags and operands into a config. Errors are one line,
// fit for "ringcp: <error>" and exit 2.
func parseArgs(args []string, stdout io.Writer) (config, error) {
	var cfg config
	var bs, srcOff, dstOff, length sizeFlag
	var qd int
	var engine, direct, syncMode, sparse, offload, srcFormat string
	var zeroBlock, maxRate sizeFlag
	var ioprio string
	fs := pflag.NewFlagSet("ringcp", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.VarP(&bs, "block-size", "b", "bytes per request (default: chosen from both ends)")
	fs.IntVarP(&qd, "queue-depth", "q", 0, "requests in flight (default: chosen)")
	fs.StringVar(&engine, "engine", "auto", choiceList(copier.EngineChoices())+": auto uses io_uring, the pool where it is unavailable or not trusted")
	fs.StringVar(&direct, "direct", "auto", choiceList(copier.DirectChoices)+": O_DIRECT on each side that accepts it; always refuses otherwise")
	fs.StringVar(&syncMode, "sync", "end", "end|none: fdatasync DST before reporting success")
	fs.Var(&srcOff, "src-offset", "start this many bytes into SRC")
	fs.Var(&dstOff, "dst-offset", "write this many bytes into DST (DST is then not truncated)")
	fs.Var(&length, "length", "copy this many bytes (default: to the end of SRC; DST is then not truncated)")
	fs.StringVar(&sparse, "sparse", "auto", choiceList(copier.SparseChoices)+": holes and zero blocks are not copied as data (auto skips zero scans where zeros cost what data costs)")
	fs.Var(&zeroBlock, "zero-block", "zero detection granularity, a power of two (default 4096)")
	targetZero := fs.Bool("target-is-zero", false, "DST already reads as zeros: skip zero ranges instead of zeroing them")
	fs.StringVar(&offload, "offload", "auto", choiceList(copier.OffloadChoices)+": let the filesystem copy (auto: reflink on btrfs/XFS, copy_file_range on NFS/SMB)")
	fs.BoolVar(&cfg.json, "json", false, "print one JSON object with the results on stdout")
	fs.StringVar(&cfg.progress, "progress", "auto", "auto|always|none: live progress line on stderr (auto: when it is a terminal)")
	fs.BoolVarP(&cfg.verbose, "verbose", "v", false, "explain alignment, block size, direct I/O and engine choices")
	fs.StringVar(&srcFormat, "src-format", "", "raw: copy SRC's bytes as they are although they form a disk image (qcow2, vmdk, vhdx, vdi, vpc, qed), which is refused otherwise")
	fs.Var(&maxRate, "max-rate", "cap the bytes moved per second (50M: 50 MiB/s; 0: no cap); change it while the copy runs with ringcp rate PID RATE")
	fs.StringVar(&ioprio, "ioprio", "", "idle|be[:0-7]|rt[:0-7]: I/O priority of every read and write (mq-deadline and bfq honour it)")
	yield := fs.Bool("yield", false, "give the disk to other work: cut depth and rate while others wait on it, raise them when they no longer do")
	force := fs.Bool("force", false, "write a DST that is in use (held by LVM/md, opened exclusively, behind a loop device), create a file in /dev, try a copy that seems not to fit; never a mounted DST")
	help := fs.BoolP("help", "h", false, "show this help")
	onlyOnce(fs)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if *help {
		fmt.Fprint(stdout, usageHead+fs.FlagUsages())
		return cfg, errHelp
	}
	if fs.NArg() != 2 {
		return cfg, fmt.Errorf("need SRC and DST, got %d operand(s) (see ringcp --help)", fs.NArg())
	}
	if err := checkChoices(engine, direct, syncMode, cfg.progress, sparse, offload); err != nil {
		return cfg, err
	}
	if bs.set && bs.v == 0 {
		return cfg, errors.New("--block-size must be more than 0")
	}
	if bs.v > copier.MaxBlockSize {
		return cfg, fmt.Errorf("--block-size %d: one request moves at most %d (1 GiB)", bs.v, copier.MaxBlockSize)
	}
	if err := checkIOPrio(ioprio); err != nil {
		return cfg, err
	}
	if fs.Changed("queue-depth") && qd < 1 {
		return cfg, fmt.Errorf("--queue-depth %d: must be at least 1", qd)
	}
	// --dst-offset or --length, even given as 0, places the copy inside
	// DST: the rest of DST is kept (--help says so).
	dstSize := copier.SizeAuto
	if dstOff.set || length.set {
		dstSize = copier.SizeKeep
	}
	cfg.opts = copier.Options{
		Src: fs.Arg(0), Dst: fs.Arg(1),
		SrcOffset: srcOff.v, DstOffset: dstOff.v, Length: length.v, LengthSet: length.set, DstSize: dstSize,
		BlockSize: int(min(bs.v, copier.MaxBlockSize+1)), QueueDepth: qd,
		Engine: copier.EngineChoice(engine), Direct: copier.DirectMode(direct),
		NoSync: syncMode == "none",
		Sparse: copier.SparseMode(sparse), TargetIsZero: *targetZero, Offload: copier.OffloadMode(offload),
	}
	if zeroBlock.set {
		if zeroBlock.v == 0 || zeroBlock.v&(zeroBlock.v-1) != 0 || zeroBlock.v > copier.MaxBlockSize {
			return cfg, fmt.Errorf("--zero-block %d: must be a power of two up to 1 GiB", zeroBlock.v)
		}
		cfg.opts.ZeroBlock = int(zeroBlock.v)
	}
	cfg.opts.Force, cfg.opts.SrcFormat = *force, srcFormat
	cfg.opts.MaxRate, cfg.opts.IOPrio, cfg.opts.Yield = maxRate.v, ioprio, *yield
	return cfg, nil
}

func checkChoices(engine, direct, syncMode, progress, sparse, offload string) error {
	choices := []struct {
		flag, value string
		allowed     []string
	}{
		{"engine", engine, copier.EngineChoices()},
		{"direct", direct, copier.DirectChoices},
		{"sync", syncMode, []string{"end", "none"}},
		{"progress", progress, []string{"auto", "always", "none"}},
		{"sparse", sparse, copier.SparseChoices},
		{"offload", offload, copier.OffloadChoices},
	}
	for _, c := range choices {
		if !contains(c.allowed, c.value) {
			return fmt.Errorf("--%s %q: want one of %v", c.flag, c.value, c.allowed)
		}
	}
	return nil
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
