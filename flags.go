package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
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
}

// sizeFlag is a byte count flag that remembers whether it was given.
type sizeFlag struct {
	v   int64
	set bool
}

func (s *sizeFlag) String() string { return units.Exact(s.v) }
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
// fit for "ringcp: <error>", and are usage errors (exit 2).
func parseArgs(args []string, stdout io.Writer) (config, error) {
	cfg, err := parseFlags(args, stdout)
	if err != nil && !errors.Is(err, errHelp) {
		err = &usageError{err}
	}
	return cfg, err
}

func parseFlags(args []string, stdout io.Writer) (config, error) {
	var cfg config
	var bs, srcOff, dstOff, length sizeFlag
	var qd, nbdConns int
	var nbdTimeout time.Duration
	var engine, direct, syncMode, sparse, offload, srcFormat, dstFormat string
	var q copier.Qcow2Options
	var clusterSize sizeFlag
	var zeroBlock, maxRate sizeFlag
	var ioprio string
	fs := pflag.NewFlagSet("ringcp", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.VarP(&bs, "block-size", "b", "bytes per request (default: chosen from both ends); with --direct auto rounded to a multiple of the O_DIRECT alignment, which keeps O_DIRECT on")
	fs.IntVarP(&qd, "queue-depth", "q", 0, "requests in flight (default: chosen)")
	fs.StringVar(&engine, "engine", "auto", "auto: io_uring, or the pool where io_uring is unavailable or not trusted; nbd for NBD exports")
	fs.StringVar(&direct, "direct", "auto", "auto: O_DIRECT on each side that takes it; always: refuse where a side cannot")
	fs.StringVar(&syncMode, "sync", "end", "end: fdatasync DST before reporting success")
	fs.Var(&srcOff, "src-offset", "start this many bytes into SRC")
	fs.Var(&dstOff, "dst-offset", "write this many bytes into DST (DST is then not truncated)")
	fs.Var(&length, "length", "copy this many bytes (default: to the end of SRC; DST is then not truncated)")
	fs.StringVar(&sparse, "sparse", "auto", "holes and zero blocks are not copied as data (auto skips zero scans where zeros cost what data costs; never copies every byte)")
	fs.Var(&zeroBlock, "zero-block", "zero detection granularity, a power of two (default 4096)")
	targetZero := fs.Bool("target-is-zero", false, "DST already reads as zeros: skip zero ranges instead of zeroing them")
	fs.StringVar(&offload, "offload", "auto", "let the filesystem copy (auto: reflink on btrfs/XFS, copy_file_range on NFS/SMB)")
	fs.BoolVar(&cfg.json, "json", false, "print one JSON object on stdout with the outcome, whatever it is (refusals included)")
	fs.StringVar(&cfg.progress.mode, "progress", "auto", choiceList(progressModes)+". auto: a line on stderr when it is a terminal; always: that line anyway; json: one JSON object a line on stderr; qemu: qemu-img -p's (NN.NN/100%) records on stdout; percent: nbdcopy's N/100 lines on stderr")
	fs.DurationVar(&cfg.progress.interval, "progress-interval", 0, "how often progress is written (default 1s; the terminal line 250ms)")
	fs.IntVar(&cfg.progress.fd, "progress-fd", -1, "write progress to this open file descriptor instead")
	fs.BoolVarP(&cfg.verbose, "verbose", "v", false, "explain alignment, block size, direct I/O and engine choices")
	fs.StringVar(&srcFormat, "src-format", "auto", "auto: a qcow2 SRC is read as its guest sees it (ranges are of the guest's bytes), other disk images (vmdk, vhdx, vdi, vpc, qed) are refused; raw: SRC's bytes as they are; qcow2: refuse anything else")
	fs.StringVar(&dstFormat, "dst-format", "raw", "raw: the bytes as they are; qcow2: make DST a new qcow2 image (version 3) that stores no holes nor zeros")
	fs.Var(&clusterSize, "cluster-size", "with --dst-format qcow2: the cluster size, a power of two from 512 to 2M (default 64K)")
	fs.StringVar(&q.Compress, "compress", "", "with --dst-format qcow2: compress every cluster, zstd or zlib (as qemu-img convert -c)")
	fs.StringVar(&q.Backing, "backing", "", "with --dst-format qcow2: the new image's backing file (a relative name is from DST's folder); only clusters that differ from it are stored")
	fs.StringVar(&q.BackingFormat, "backing-format", "", "the --backing file's format, raw or qcow2 (default: by its first bytes)")
	fs.StringVar(&q.Preallocation, "preallocation", "", "with --dst-format qcow2: off, or metadata (every table written, as qemu-img's preallocation=metadata)")
	fs.StringVar(&cfg.jobs, "jobs", "", "copy each job listed in FILE (a line: SRC DST [range flags]; - reads stdin) in this one process, sharing one buffer budget; the other flags apply to every job")
	fs.IntVar(&cfg.parallel, "parallel", 0, "with --jobs: how many jobs run at once, in the list's order (0: all)")
	verify := fs.Bool("verify", false, "read DST back after the copy (from the device, not the cache) and compare it with what was read from SRC; exit 3 on a difference")
	checksum := fs.Bool("checksum", false, "compute SRC's oVirt imageio checksum (blake2b, 4 MiB blocks) from the data as it is copied")
	resume := fs.Bool("resume", false, "record progress in a state file and, when one is there, continue the interrupted copy it records")
	statePath := fs.String("state", "", "the --resume state file (default: DST.ringcp-state; a block device DST needs one); with --jobs, a folder for one per job")
	syncEvery := fs.Duration("sync-every", copier.DefaultSyncEvery, "with --resume: sync DST and record the progress this often: a kill loses about this much work")
	fs.IntVar(&nbdConns, "nbd-connections", copier.DefaultNBDConnections, "connections to an NBD export whose server allows several (CAN_MULTI_CONN)")
	fs.DurationVar(&nbdTimeout, "nbd-timeout", 0, "fail when an NBD server does not answer for this long (default 5m; 30s to connect)")
	fs.Var(&maxRate, "max-rate", "cap the bytes moved per second (50M: 50 MiB/s; 0: no cap); change it while the copy runs with ringcp rate PID RATE")
	fs.StringVar(&ioprio, "ioprio", "", "I/O priority of every read and write: idle, be[:0-7] or rt[:0-7] (the mq-deadline and bfq schedulers honour it)")
	yield := fs.Bool("yield", false, "give the disk to other work: cut depth and rate while others wait on it, raise them when they no longer do")
	force := fs.Bool("force", false, "write a DST that is in use (held by LVM/md, opened exclusively, behind a loop device), create a file in /dev, try a copy that seems not to fit; never a mounted DST")
	fs.BoolVar(&cfg.version, "version", false, "print the version, and whether io_uring is usable here (with --json: as JSON)")
	help := fs.BoolP("help", "h", false, "show this help")
	onlyOnce(fs)
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
	if err := checkOperands(fs, cfg.jobs); err != nil {
		return cfg, err
	}
	if err := checkChoices(engine, direct, syncMode, cfg.progress.mode, sparse, offload); err != nil {
		return cfg, err
	}
	if err := checkProgress(cfg.progress, fs.Changed("progress-interval")); err != nil {
		return cfg, err
	}
	if cfg.jobs != "" && cfg.progress.mode != progressAuto && cfg.progress.mode != progressAlways && cfg.progress.mode != progressNone {
		return cfg, fmt.Errorf("--progress %s is for one copy; with --jobs the line on a terminal shows them all, and --json reports each job", cfg.progress.mode)
	}
	cfg.progress.json = cfg.json
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
	if nbdConns < 1 || nbdConns > copier.MaxNBDConnections {
		return cfg, fmt.Errorf("--nbd-connections %d: want 1 to %d", nbdConns, copier.MaxNBDConnections)
	}
	if nbdTimeout < 0 {
		return cfg, fmt.Errorf("--nbd-timeout %v: must not be negative", nbdTimeout)
	}
	cfg.opts.NBD = copier.NBDOptions{Connections: nbdConns, Timeout: nbdTimeout}
	cfg.opts.Force, cfg.opts.SrcFormat, cfg.opts.DstFormat = *force, srcFormat, dstFormat
	q.ClusterSize = clusterSize.v
	cfg.opts.Qcow2 = q
	if (*statePath != "" || fs.Changed("sync-every")) && !*resume {
		return cfg, errors.New("--state and --sync-every are for --resume: give --resume too")
	}
	if *syncEvery <= 0 {
		return cfg, fmt.Errorf("--sync-every %v: must be positive", *syncEvery)
	}
	cfg.opts.Verify, cfg.opts.Resume, cfg.opts.StatePath = *verify, *resume, *statePath
	if *checksum {
		cfg.opts.Checksum = imageioChecksum
	}
	cfg.opts.SyncEvery = *syncEvery
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
		{"progress", progress, progressModes},
		{"sparse", sparse, copier.SparseChoices},
		{"offload", offload, copier.OffloadChoices},
	}
	for _, c := range choices {
		if !contains(c.allowed, c.value) {
			return fmt.Errorf("--%s %q: want one of %s", c.flag, c.value, oneOf(c.allowed))
		}
	}
	return nil
}

// checkProgress refuses an interval that is not positive and a
// descriptor that is not open for writing, before anything is copied.
func checkProgress(pc progressConfig, intervalSet bool) error {
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
