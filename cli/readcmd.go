package cli

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
	"github.com/spf13/pflag"
)

// readCommands are the subcommands that read and write nothing:
//
//	ringcp verify [flags] SRC DST   compare two files or devices; exit 0 equal, 3 not
//	ringcp checksum [flags] PATH    print the oVirt imageio checksum as JSON
var readCommands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"verify":   runVerify,
	"checksum": runChecksum,
}

const verifyUsage = `Usage: ringcp verify [flags] SRC DST

Compares SRC and DST (files or block devices) byte for byte, reading both
at once through the engine. Exit 0: equal; 3: they differ (the first
differing offset is named); 2: refused; 1: a read failed. A device DST
may be longer than SRC: the range is SRC's, or --length.

Flags:
`

const checksumUsage = `Usage: ringcp checksum [flags] PATH

Prints the oVirt imageio checksum of PATH (or of a range of it) as JSON:
{"algorithm": "blake2b", "block_size": 4194304, "checksum": "<hex>"}, as
imageio's checksum API returns it. Holes are not read.

Flags:
`

// readFormatUsage is --src-format's and --dst-format's usage when an end
// is read.
const readFormatUsage = "auto|raw|qcow2: auto reads a qcow2 image as its guest sees it, told by its first bytes (an image that names a backing or data file is then refused: its format was only guessed); qcow2 reads it so and follows the files it names; raw reads the bytes as they are"

// readFlags are the flags verify and checksum share with a copy, from the
// same definitions (optionFlags), set on an Options whose fields a
// compare or a checksum takes; copier checks their values.
type readFlags struct {
	fs                  *pflag.FlagSet
	opts                copier.Options
	json, verbose, help bool
	progress            progressConfig
}

func newReadFlags(name string, withDst bool) *readFlags {
	f := &readFlags{fs: newFlagSet(name)}
	names := []string{"block-size", "queue-depth", "engine", "direct", "src-offset", "length", "src-format"}
	if withDst {
		names = append(names, "dst-offset", "dst-format")
	}
	defineOptionFlags(f.fs, &f.opts, names...)
	// What a range is when nothing is written, and what an end is read
	// as.
	f.fs.Lookup("length").Usage = "this many bytes (default: to the end of SRC)"
	f.fs.Lookup("src-format").Usage = readFormatUsage
	if withDst {
		f.fs.Lookup("dst-offset").Usage = "start this many bytes into DST"
		f.fs.Lookup("dst-format").Usage = readFormatUsage
		f.fs.Lookup("dst-format").DefValue = copier.FormatAuto
	}
	f.fs.BoolVar(&f.json, "json", false, "print one JSON object with the outcome on stdout, whatever it is (refusals included)")
	f.fs.StringVar(&f.progress.mode, "progress", progressAuto, choiceList(progressModes)+", as for a copy: the bytes read and checked")
	f.fs.DurationVar(&f.progress.interval, "progress-interval", 0, "how often progress is written (default 1s; the terminal line 250ms)")
	f.fs.IntVar(&f.progress.fd, "progress-fd", -1, "write progress to this open file descriptor instead")
	f.fs.BoolVarP(&f.verbose, "verbose", "v", false, "explain the choices")
	f.fs.BoolVarP(&f.help, "help", "h", false, "show this help")
	onlyOnce(f.fs)
	return f
}

// parse reads args; ops is the number of operands.
func (f *readFlags) parse(args []string, ops int, usage string, stdout io.Writer) (copier.ReadOptions, error) {
	if err := f.fs.Parse(args); err != nil {
		return copier.ReadOptions{}, err
	}
	if f.help {
		fmt.Fprint(stdout, usage+flagHelp(f.fs))
		return copier.ReadOptions{}, errHelp
	}
	if f.fs.NArg() != ops {
		return copier.ReadOptions{}, fmt.Errorf("need %d operand(s), got %d (see %s --help)", ops, f.fs.NArg(), f.fs.Name())
	}
	if err := checkProgress(f.progress, f.fs.Changed("progress-interval")); err != nil {
		return copier.ReadOptions{}, err
	}
	// stdout holds the result: verify's --json object, checksum's always.
	f.progress.json = f.json || ops == 1
	if f.progress.json && sharesStdout(f.progress) {
		return copier.ReadOptions{}, &flagError{flag: "--progress-fd", err: fmt.Errorf("--progress %s --progress-fd %d: the progress and the result would share stdout; give another descriptor", f.progress.mode, f.progress.fd)}
	}
	o := f.opts
	r := copier.ReadOptions{Src: f.fs.Arg(0), SrcOffset: o.SrcOffset, DstOffset: o.DstOffset, Length: o.Length, LengthSet: o.LengthSet,
		BlockSize: o.BlockSize, QueueDepth: o.QueueDepth, Engine: o.Engine, Direct: o.Direct, Sum: imageioChecksum,
		SrcFormat: o.SrcFormat, DstFormat: o.DstFormat}
	if ops == 2 {
		r.Dst = f.fs.Arg(1)
	}
	return r, nil
}

// startProgress wires --progress into o; the function it returns ends
// the format after the pass.
func (f *readFlags) startProgress(o *copier.ReadOptions, stdout, stderr io.Writer) func() {
	sink, every := newSink(f.progress, stdout, stderr)
	if sink == nil {
		return func() {}
	}
	if f.progress.interval > 0 {
		every = f.progress.interval
	}
	o.OnProgress, o.ProgressInterval = sink.update, every
	return sink.end
}

func (f *readFlags) explain(stderr io.Writer, rep copier.ReadReport) {
	if !f.verbose {
		return
	}
	printNotes(stderr, rep.Notes)
	fmt.Fprintf(stderr, "ringcp: engine %s%s, block size %d, queue depth %d, O_DIRECT SRC %v DST %v\n",
		rep.Engine, fallbackNote(copier.Report{FallbackReason: rep.FallbackReason}), rep.BlockSize, rep.QueueDepth, rep.DirectSrc, rep.DirectDst)
}

// jsonCompare is what `ringcp verify --json` adds to the ReadReport.
type jsonCompare struct {
	Equal          bool  `json:"equal"`
	FirstBadOffset int64 `json:"first_bad_offset"`     // in DST, -1 when equal
	FirstBadSrc    int64 `json:"first_bad_src_offset"` // the same byte in SRC, -1 when equal
	BadBlockSize   int   `json:"bad_block_size"`       // the blocks bad_blocks counts
	BadBlocks      int64 `json:"bad_blocks"`
}

// notCompared is verify's fields before anything differed.
func notCompared() jsonCompare {
	return jsonCompare{FirstBadOffset: -1, FirstBadSrc: -1, BadBlockSize: copier.CellSize}
}

// readObject is verify's or checksum's ReadReport with the ends and the
// range the command line asked, where a refusal came before they were
// measured.
func readObject(o copier.ReadOptions, rep copier.ReadReport) copier.ReadReport {
	if rep.Src == "" {
		rep.Src, rep.Dst, rep.SrcOffset, rep.DstOffset = shown(o.Src), o.Dst, o.SrcOffset, o.DstOffset
	}
	return rep
}

func runVerify(args []string, stdout, stderr io.Writer) error {
	f := newReadFlags("ringcp verify", true)
	o, err := f.parse(args, 2, verifyUsage, stdout)
	if err != nil {
		return f.usage(stdout, stderr, "verify", args, err)
	}
	ctx, sig := withSignals()
	defer sig.stop()
	endProgress := f.startProgress(&o, stdout, stderr)
	rep, err := copier.Compare(ctx, o)
	endProgress()
	f.explain(stderr, rep)
	j := notCompared()
	j.Equal = err == nil
	var mm *copier.MismatchError
	if errors.As(err, &mm) {
		j.FirstBadOffset, j.FirstBadSrc, j.BadBlocks = mm.Offset, mm.SrcOffset, mm.BadBlocks
	}
	if err != nil {
		err = readStopped(stderr, "verify", "compared", rep.Bytes, err, sig.caught())
	} else {
		fmt.Fprintf(stderr, "ringcp: %s and %s are equal: %s compared in %.2f s (%s)\n",
			shown(o.Src), o.Dst, units.Format(rep.Bytes), rep.Seconds, units.Rate(rep.Bytes, rep.Seconds))
	}
	if f.json {
		return writeObject(stdout, newEnvelope("verify", err), err, readObject(o, rep), j)
	}
	return err
}

func runChecksum(args []string, stdout, stderr io.Writer) error {
	f := newReadFlags("ringcp checksum", false)
	o, err := f.parse(args, 1, checksumUsage, stdout)
	if err != nil {
		return f.usage(stdout, stderr, "checksum", args, err)
	}
	ctx, sig := withSignals()
	defer sig.stop()
	endProgress := f.startProgress(&o, stdout, stderr)
	rep, err := copier.Checksum(ctx, o)
	endProgress()
	f.explain(stderr, rep)
	if err != nil {
		err = readStopped(stderr, "checksum", "read", rep.Bytes, err, sig.caught())
	}
	if f.verbose && err == nil {
		fmt.Fprintf(stderr, "ringcp: %s: %s read of %s in %.2f s\n", shown(o.Src), units.Format(rep.BytesRead), units.Format(rep.Bytes), rep.Seconds)
	}
	switch {
	case f.json:
		return writeObject(stdout, newEnvelope("checksum", err), err, readObject(o, rep))
	case err != nil:
		return err
	}
	// As imageio's API and Python's json.dumps write it.
	c := rep.Checksum
	if _, err := fmt.Fprintf(stdout, "{\"algorithm\": %q, \"block_size\": %d, \"checksum\": %q}\n", c.Algorithm, c.BlockSize, c.Checksum); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// usage reports a command line of verify or checksum that could not be
// read, with the subcommand's name, as a usage error (exit 2); --help
// shown is not one.
func (f *readFlags) usage(stdout, stderr io.Writer, cmd string, args []string, err error) error {
	if errors.Is(err, errHelp) {
		return err
	}
	fmt.Fprintf(stderr, "%s: %s\n", f.fs.Name(), message(err))
	err = &reported{&usageError{err}}
	if f.json || wantsJSON(args) {
		var o copier.ReadOptions
		o.Src, o.Dst = guessOperands(f.fs, args)
		bodies := []any{readObject(o, copier.ReadReport{})}
		if cmd == "verify" {
			bodies = append(bodies, notCompared())
		}
		return writeObject(stdout, newEnvelope(cmd, err), err, bodies...)
	}
	return err
}

// readStopped is verify's or checksum's error, marked as a stop by sig
// when a signal stopped the command, which then says how much of total it
// had read or compared (verb), not what a copy would have written.
func readStopped(stderr io.Writer, cmd, verb string, total int64, err error, sig syscall.Signal) error {
	if sig == 0 {
		return err
	}
	var canceled *copier.CanceledError
	if errors.As(err, &canceled) {
		fmt.Fprintf(stderr, "ringcp: %s %s after %s of %s %s; no result\n",
			cmd, stoppedBy(sig, "interrupted"), byteCount(canceled.Contiguous), units.Format(total), verb)
		err = &reported{err}
	}
	return &interruptedError{sig: sig, err: err}
}
