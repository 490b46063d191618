package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
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

// readFlags are the flags verify and checksum share with a copy.
type readFlags struct {
	fs                         *pflag.FlagSet
	bs, srcOff, dstOff, length sizeFlag
	qd                         int
	engine, direct             string
	json, verbose, help        bool
}

func newReadFlags(name string, withDst bool) *readFlags {
	f := &readFlags{fs: pflag.NewFlagSet(name, pflag.ContinueOnError)}
	fs := f.fs
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.VarP(&f.bs, "block-size", "b", "bytes per request (default: chosen)")
	fs.IntVarP(&f.qd, "queue-depth", "q", 0, "requests in flight (default: chosen)")
	fs.StringVar(&f.engine, "engine", "auto", choiceList(copier.EngineChoices()))
	fs.StringVar(&f.direct, "direct", "auto", choiceList(copier.DirectChoices)+": O_DIRECT where it is accepted")
	fs.Var(&f.srcOff, "src-offset", "start this many bytes into SRC")
	if withDst {
		fs.Var(&f.dstOff, "dst-offset", "start this many bytes into DST")
		fs.BoolVar(&f.json, "json", false, "print one JSON object with the result on stdout")
	}
	fs.Var(&f.length, "length", "this many bytes (default: to the end of SRC)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "explain the choices")
	fs.BoolVarP(&f.help, "help", "h", false, "show this help")
	onlyOnce(fs)
	return f
}

// parse reads args and checks them; ops is the number of operands.
func (f *readFlags) parse(args []string, ops int, usage string, stdout io.Writer) (copier.ReadOptions, error) {
	if err := f.fs.Parse(args); err != nil {
		return copier.ReadOptions{}, err
	}
	if f.help {
		fmt.Fprint(stdout, usage+f.fs.FlagUsages())
		return copier.ReadOptions{}, errHelp
	}
	if f.fs.NArg() != ops {
		return copier.ReadOptions{}, fmt.Errorf("need %d operand(s), got %d (see %s --help)", ops, f.fs.NArg(), f.fs.Name())
	}
	if err := checkChoices(f.engine, f.direct, "end", "none", "auto", "auto"); err != nil {
		return copier.ReadOptions{}, err
	}
	if f.bs.v > copier.MaxBlockSize || (f.bs.set && f.bs.v == 0) {
		return copier.ReadOptions{}, fmt.Errorf("--block-size %d: from 1 byte to 1 GiB", f.bs.v)
	}
	o := copier.ReadOptions{Src: f.fs.Arg(0), SrcOffset: f.srcOff.v, DstOffset: f.dstOff.v, Length: f.length.v, LengthSet: f.length.set,
		BlockSize: int(f.bs.v), QueueDepth: f.qd, Engine: copier.EngineChoice(f.engine), Direct: copier.DirectMode(f.direct),
		Sum: imageioChecksum}
	if ops == 2 {
		o.Dst = f.fs.Arg(1)
	}
	return o, nil
}

func (f *readFlags) explain(stderr io.Writer, rep copier.ReadReport) {
	if !f.verbose {
		return
	}
	printNotes(stderr, rep.Notes)
	fmt.Fprintf(stderr, "ringcp: engine %s%s, block size %d, queue depth %d, O_DIRECT SRC %v DST %v\n",
		rep.Engine, fallbackNote(copier.Report{FallbackReason: rep.FallbackReason}), rep.BlockSize, rep.QueueDepth, rep.DirectSrc, rep.DirectDst)
}

// jsonCompare is `ringcp verify --json`.
type jsonCompare struct {
	Src            string  `json:"src"`
	Dst            string  `json:"dst"`
	Equal          bool    `json:"equal"`
	Bytes          int64   `json:"bytes"`
	Seconds        float64 `json:"seconds"`
	Engine         string  `json:"engine"`
	FirstBadOffset int64   `json:"first_bad_offset"`     // in DST, -1 when equal
	FirstBadSrc    int64   `json:"first_bad_src_offset"` // the same byte in SRC, -1 when equal
	BlockSize      int     `json:"block_size"`           // the blocks bad_blocks counts
	BadBlocks      int64   `json:"bad_blocks"`
	Error          string  `json:"error,omitempty"`
}

func runVerify(args []string, stdout, stderr io.Writer) error {
	f := newReadFlags("ringcp verify", true)
	o, err := f.parse(args, 2, verifyUsage, stdout)
	if err != nil {
		return f.usage(stderr, err)
	}
	ctx, sig := withSignals()
	defer sig.stop()
	rep, err := copier.Compare(ctx, o)
	f.explain(stderr, rep)
	j := jsonCompare{Src: o.Src, Dst: o.Dst, Equal: err == nil, Bytes: rep.Bytes, Seconds: rep.Seconds, Engine: rep.Engine,
		FirstBadOffset: -1, FirstBadSrc: -1, BlockSize: copier.CellSize}
	var mm *copier.MismatchError
	if errors.As(err, &mm) {
		j.FirstBadOffset, j.FirstBadSrc, j.BadBlocks = mm.Offset, mm.SrcOffset, mm.BadBlocks
	}
	if err != nil {
		j.Error = message(err)
		err = readStopped(stderr, "verify", "compared", rep.Bytes, err, sig.caught())
	} else {
		fmt.Fprintf(stderr, "ringcp: %s and %s are equal: %s compared in %.2f s (%s)\n",
			o.Src, o.Dst, units.Format(rep.Bytes), rep.Seconds, units.Rate(rep.Bytes, rep.Seconds))
	}
	if f.json {
		if jerr := json.NewEncoder(stdout).Encode(j); jerr != nil && err == nil {
			return fmt.Errorf("writing JSON: %w", jerr)
		}
	}
	return err
}

func runChecksum(args []string, stdout, stderr io.Writer) error {
	f := newReadFlags("ringcp checksum", false)
	o, err := f.parse(args, 1, checksumUsage, stdout)
	if err != nil {
		return f.usage(stderr, err)
	}
	ctx, sig := withSignals()
	defer sig.stop()
	rep, err := copier.Checksum(ctx, o)
	f.explain(stderr, rep)
	if err != nil {
		return readStopped(stderr, "checksum", "read", rep.Bytes, err, sig.caught())
	}
	// As imageio's API and Python's json.dumps write it.
	c := rep.Checksum
	if _, err := fmt.Fprintf(stdout, "{\"algorithm\": %q, \"block_size\": %d, \"checksum\": %q}\n", c.Algorithm, c.BlockSize, c.Checksum); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	if f.verbose {
		fmt.Fprintf(stderr, "ringcp: %s: %s read of %s in %.2f s\n", o.Src, units.Format(rep.BytesRead), units.Format(rep.Bytes), rep.Seconds)
	}
	return nil
}

// usage reports a command line of verify or checksum that could not be
// read, with the subcommand's name, as a usage error (exit 2); --help
// shown is not one.
func (f *readFlags) usage(stderr io.Writer, err error) error {
	if errors.Is(err, errHelp) {
		return err
	}
	fmt.Fprintf(stderr, "%s: %s\n", f.fs.Name(), message(err))
	return &reported{&usageError{err}}
}

// readStopped is verify's or checksum's error, marked as a stop by sig
// when a signal stopped the command, which then says how much of total it
// had read or compared (verb), not what a copy would have written.
func readStopped(stderr io.Writer, cmd, verb string, total int64, err error, sig syscall.Signal) error {
	if sig == 0 {
		return err
	}
	var canceled *engine.CanceledError
	if errors.As(err, &canceled) {
		fmt.Fprintf(stderr, "ringcp: %s %s after %s of %s %s; no result\n",
			cmd, stoppedBy(sig, "interrupted"), byteCount(canceled.Contiguous), units.Format(total), verb)
		err = &reported{err}
	}
	return &interruptedError{sig: sig, err: err}
}
