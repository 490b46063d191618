package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ringcp/ringcp/copier"
)

const ddUsage = `Usage: ringcp dd [if=SRC] [of=DST] [OPERAND]...

Copies as GNU dd does, with dd's operands and dd's records lines, through
ringcp's engine: checks before the first write, O_DIRECT and io_uring where
they work, an fdatasync barrier at the end. A script that calls dd changes
one word.

  if=SRC, of=DST       files or block devices; without if= (or if=-) stdin,
                       without of= (or of=-) stdout, read and written in
                       order; if=/dev/zero (a wipe: count=, or the whole
                       device DST), if=/dev/urandom, of=/dev/null (a read test)
  bs=N                 bytes per record, in and out; also ringcp's block size
  ibs=N, obs=N         bytes per input and output record (default 512)
  count=N              copy N input records (N bytes with iflag=count_bytes or NB)
  skip=N (iseek=N)     start N input records into SRC (bytes: iflag=skip_bytes or NB)
  seek=N (oseek=N)     start N output records into DST (bytes: oflag=seek_bytes or NB)
  conv=notrunc         keep DST's bytes past the copy (otherwise a file DST is cut at seek)
  conv=fdatasync,fsync ringcp's barrier: always on
  conv=sparse          leave zero blocks as holes in a file DST that is cut or new
  conv=excl, nocreat   fail if DST exists, or if it does not
  conv=sync            accepted when it pads nothing (the copy is whole ibs records)
  iflag=, oflag=       direct (both: O_DIRECT or refuse), skip_bytes, count_bytes,
                       seek_bytes, sync, dsync, fullblock, noatime, nocache
  iformat=raw          copy a disk image's (qcow2, vmdk) or compressed file's
                       bytes as they are, as dd does; without it ringcp reads
                       the guest's bytes, or what the data unpacks to, and
                       says so (ringcp's own operand: also auto, qcow2, vmdk,
                       gzip, zstd, xz, bzip2)
  --json               also print the --json object of the copy on stdout
                       (on stderr when the copy goes to stdout)
  status=none|noxfer|progress
                       none: no records lines; noxfer: no transfer line;
                       progress: a transfer line redrawn every second

Reads are always whole (as iflag=fullblock): count=N from a pipe copies N
records or fails, never fewer. stdout that is a terminal is refused, as
are seek= on stdout and other character devices.

N takes dd's suffixes: c (1), w (2), b (512), K M G T P E (x1024; k too),
KB MB GB... (x1000), KiB MiB GiB... (x1024), and products (2x512).
What ringcp cannot do the dd way is refused (exit 2) naming the operand:
conv=noerror, conv=swab and the other conversions, cbs=, oflag=append.
SIGUSR1 prints the records and transfer lines, and the copy goes on.
Exit codes as for ringcp: 0 complete, 1 failed, 2 refused, 128+N signal.
`

// ddWords turns the library's field names into dd's operands.
var ddWords = fieldReplacer(map[string]string{
	"Options.SrcOffset": "skip=", "Options.DstOffset": "seek=", "Options.Length": "count=", "Options.BlockSize": "bs=",
	"Options.Direct": "iflag=direct,oflag=direct", "Options.Sparse": "conv=sparse", "Options.Force": "(ringcp's --force)",
	"Options.SrcFormat raw": "iformat=raw", "Options.DstFormat raw": "(ringcp's --dst-format raw)",
})

// runDD is `ringcp dd`: dd's operands mapped onto copier.Options, dd's
// lines printed. It prints its own errors, in dd's words.
func runDD(args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Fprint(stdout, ddUsage)
		return errHelp
	}
	args, asJSON := withoutJSON(args)
	o, rep, err := dd(args, stdout, stderr)
	var shown *reported
	if err != nil && !errors.As(err, &shown) {
		fmt.Fprintf(stderr, "ringcp dd: %s\n", oneLine(ddWords.Replace(err.Error())))
		err = &reported{err}
	}
	if asJSON { // on stderr when stdout carries the copy or is DST
		return writeObject(jsonStream(o.Dst, stdout, stderr), newEnvelope("dd", err), err, copyObject(o, rep, err))
	}
	return err
}

// withoutJSON takes --json out of dd's operands: dd has no such operand,
// and with it ringcp dd prints the --json object of a copy on stdout, dd's
// lines staying on stderr.
func withoutJSON(args []string) ([]string, bool) {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if a != "--json" {
			out = append(out, a)
		}
	}
	return out, len(out) < len(args)
}

// dd copies as the operands say; the options are what they resolved to
// (SRC and DST at least, when they could not be resolved).
func dd(args []string, stdout, stderr io.Writer) (copier.Options, copier.Report, error) {
	a, err := parseDD(args)
	if err != nil {
		return copier.Options{Src: a.src, Dst: a.dst}, copier.Report{}, err
	}
	// The signals are taken before the operands are resolved: that opens
	// SRC (an NBD server may stall its handshake) and may decode a
	// compressed SRC up to the range's end (packedEnd), and a stop
	// signal then ended dd with no line (SIGQUIT: a goroutine dump and
	// exit 2, "refused"), where the plain command says it stopped.
	ctx, sig := withSignals()
	defer sig.stop()
	job, err := unlessStopped(ctx, sig, a.plan)
	if err != nil {
		return copier.Options{Src: a.src, Dst: a.dst}, copier.Report{}, err
	}
	if job.note != "" && a.status != "none" {
		fmt.Fprintf(stderr, "ringcp dd: %s\n", job.note)
	}
	if job.warn != "" {
		fmt.Fprintf(stderr, "ringcp dd: %s\n", job.warn)
	}
	if job.opts.Dst == "-" {
		job.opts.Stream.Stdout = stdout
	}
	rep, err := job.run(ctx, sig, stderr)
	return job.opts, rep, err
}

// ddJob is a dd command line resolved to one copy.
type ddJob struct {
	args ddArgs
	opts copier.Options
	warn string // what dd would warn about, yet copy
	note string // where ringcp reads SRC otherwise than dd (its format)
}

// plan resolves the operands against SRC's size, and refuses what ringcp
// cannot do as dd does it.
func (a ddArgs) plan() (ddJob, error) {
	j := ddJob{args: a}
	if err := a.checkConv(); err != nil {
		return j, err
	}
	skip, err := a.bytes(a.skip, a.skipBytes, a.ibs, "skip")
	if err != nil {
		return j, err
	}
	seek, err := a.bytes(a.seek, a.seekBytes, a.obs, "seek")
	if err != nil {
		return j, err
	}
	o := copier.Options{Src: a.src, Dst: a.dst, DstOffset: seek, LengthSet: true,
		DstSize: copier.SizeTruncate, Sparse: copier.SparseNever}
	if a.has("notrunc") {
		o.DstSize = copier.SizeKeep
	}
	if a.has("sparse") {
		o.Sparse = copier.SparseAuto
	}
	if a.directIn && a.directO {
		o.Direct = copier.DirectAlways
	}
	if a.bsGiven && a.ibs <= copier.MaxBlockSize {
		o.BlockSize = int(a.ibs)
	}
	o.SrcFormat = a.iformat
	size, known, formatted, err := a.sourceEnd()
	if err != nil {
		return j, err
	}
	if formatted && a.iformat == "" {
		j.note = ddQuote(a.src) + ": read as the data its format holds (a disk image's guest, compressed data unpacked), as ringcp reads it; iformat=raw copies its bytes as they are, as GNU dd does"
	}
	if !known {
		// The end packedEnd learnt is announced to the copy, which then
		// fails if SRC no longer ends there (replaced since, or still
		// being written) rather than cut the new data at the old end.
		if size, known = a.packedEnd(skip); known {
			o.SrcSize = size
		}
	}
	if known {
		j.warn, err = a.sizedRange(&o, skip, size)
	} else {
		err = a.streamRange(&o, skip)
	}
	if err != nil {
		return j, err
	}
	j.opts = o
	return j, a.checkDst(o.Length, seek)
}

// bytes turns skip, seek or count into bytes.
func (a ddArgs) bytes(n int64, inBytes bool, unit int64, name string) (int64, error) {
	if inBytes {
		return n, nil
	}
	v, err := ddMul(n, unit)
	if err != nil {
		return 0, usagef("%s=%d: %d records of %d bytes are too many", name, n, n, unit)
	}
	return v, nil
}

func (a ddArgs) has(conv string) bool { return slices.Contains(a.conv, conv) }

// ddRefused are conversions ringcp does not do, and why.
var ddRefused = map[string]string{
	"noerror": "ringcp stops at the first read error and says where; it does not go on past bad blocks (GNU ddrescue does)",
	"swab":    "ringcp copies bytes as they are; it does not swap byte pairs",
	"ascii":   "ringcp copies bytes as they are; it does not convert EBCDIC",
	"ebcdic":  "ringcp copies bytes as they are; it does not convert to EBCDIC",
	"ibm":     "ringcp copies bytes as they are; it does not convert to EBCDIC",
	"block":   "ringcp copies bytes as they are; it does not pad newline-terminated records",
	"unblock": "ringcp copies bytes as they are; it does not turn records into lines",
	"lcase":   "ringcp copies bytes as they are; it does not change case",
	"ucase":   "ringcp copies bytes as they are; it does not change case",
}

func (a ddArgs) checkConv() error {
	for _, c := range a.conv {
		if why, ok := ddRefused[c]; ok {
			return &copier.RefusedError{Kind: copier.KindNotSupported, Reason: "conv=" + c + ": " + why}
		}
		if !slices.Contains(ddConvs, c) {
			return usagef("conv=%s: unknown conversion", c)
		}
	}
	if slices.Contains(a.oflags, "append") || slices.Contains(a.iflags, "append") {
		return usagef("oflag=append: ringcp writes DST at seek=, not at its end")
	}
	return nil
}

// run copies and prints dd's lines.
func (j ddJob) run(ctx context.Context, sig *signals, stderr io.Writer) (copier.Report, error) {
	a := j.args
	var prog *ddProgress
	if a.status == "progress" {
		prog = &ddProgress{w: stderr}
		j.opts.OnProgress, j.opts.ProgressInterval = prog.update, time.Second
	}
	plan, err := unlessStopped(ctx, sig, func() (*copier.Plan, error) { return copier.Prepare(j.opts) })
	if err != nil {
		return copier.Report{}, err
	}
	prefix := ""
	if prog != nil {
		prefix = "\n" // as dd: off the progress line, which goes on below
	}
	stopStatus := answerStatus(stderr, prefix, func() string {
		s := plan.Status()
		return strings.TrimSuffix(ddRecords(s.BytesDone, s.BytesDone, a.ibs, a.obs)+ddXfer(s.BytesDone, time.Duration(s.Seconds*1e9), false), "\n")
	})
	start := time.Now()
	rep, err := plan.Run(ctx)
	elapsed := time.Since(start)
	stopStatus()
	if err != nil {
		err = stoppedCopy(stderr, j.opts, rep, err, sig.caught())
	}
	if a.status != "none" {
		prog.end()
		ddEnd(stderr, a, rep, elapsed)
	}
	return rep, err
}

// ddEnd is dd's last lines for a copy that ended with rep: its records
// in and out, then (unless status=noxfer) the transfer line. As dd's,
// they count what went out to DST: none of it when a new DST was
// discarded (a copy that failed, SRC changed while it was read), though
// the copy wrote it first; "N bytes copied" then would claim a copy
// nobody has. The records read are still said, as dd says them after a
// failure.
func ddEnd(w io.Writer, a ddArgs, rep copier.Report, elapsed time.Duration) {
	read := rangeDone(rep)
	written := read
	if rep.DstState == copier.DstDiscarded {
		written = 0
	}
	fmt.Fprint(w, ddRecords(read, written, a.ibs, a.obs))
	if a.status != "noxfer" {
		fmt.Fprintln(w, ddXfer(written, elapsed, false))
	}
}

// ddQuote quotes a file name as dd's messages do (gnulib's shell-escape
// quoting): as it is when the shell would read it so, else in '...'.
func ddQuote(name string) string {
	if name != "" && !strings.ContainsAny(name, " \t\n!\"#$&'()*;<=>?[\\]^`{|}~") {
		return name
	}
	return "'" + strings.ReplaceAll(name, "'", `'\''`) + "'"
}

// ddProgress is status=progress: dd's transfer line, redrawn in place
// once a second, with whole seconds.
type ddProgress struct {
	w     io.Writer
	width int // of the line drawn last
}

func (p *ddProgress) update(s copier.Status) {
	if s.Phase == copier.PhaseDone {
		return // the final lines follow
	}
	line := ddXfer(s.BytesDone, time.Duration(s.Seconds*1e9), true)
	pad := max(0, p.width-len(line))
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.width = len(line)
}

// end moves past the redrawn line before the records lines.
func (p *ddProgress) end() {
	if p != nil && p.width > 0 {
		fmt.Fprintln(p.w)
	}
}
