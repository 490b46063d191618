package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/units"
)

// stoppedCopy reports a copy that did not complete, by a fault or a
// signal: what happened, then what DST holds now, so that nobody takes a
// partial DST for a copy. It returns the outcome, marked as reported.
func stoppedCopy(stderr io.Writer, opts copier.Options, rep copier.Report, err error, sig syscall.Signal) error {
	var canceled *engine.CanceledError
	if sig != 0 && errors.As(err, &canceled) {
		fmt.Fprintln(stderr, "ringcp: "+interruptedText(sig, opts, rep))
	} else {
		fmt.Fprintf(stderr, "ringcp: %s\n", message(err))
	}
	if line := dstState(opts, rep); line != "" {
		fmt.Fprintf(stderr, "ringcp: DST %s %s\n", opts.Dst, line)
	}
	err = &reported{err}
	if sig != 0 {
		if rep.Engine != "" { // else it stopped before its engine ran (a resumed copy's check)
			printSummary(stderr, rep, "interrupted")
		}
		return &interruptedError{sig: sig, err: err}
	}
	return err
}

// dstState says what a stopped copy left in DST.
func dstState(opts copier.Options, rep copier.Report) string {
	switch rep.DstState {
	case copier.DstDiscarded:
		return "discarded: a new DST is only created once the copy is complete"
	case copier.DstPrefix:
		return fmt.Sprintf("kept: it holds the first %s of the copy and ends there; it is not a complete copy", byteCount(rep.Contiguous))
	case copier.DstPartial:
		return fmt.Sprintf("holds the first %s of the copy from offset %d; the rest of the range was not completely copied",
			byteCount(rep.Contiguous), opts.DstOffset)
	case copier.DstComplete:
		return "is complete"
	case copier.DstChanging:
		return fmt.Sprintf("holds the first %s of the copy from offset %d; requests still in flight may change the rest until ringcp has exited",
			byteCount(rep.Contiguous), opts.DstOffset)
	case copier.DstUnknown:
		return "holds data that cannot be vouched for: flushing what was written failed too; do not use it"
	case copier.DstResumable:
		return resumableLine(rep)
	case copier.DstMismatch:
		return "was copied, but does not read back as SRC: do not use it"
	}
	return "" // untouched: nothing to say
}

func syncState(opts copier.Options, rep copier.Report) string {
	switch {
	case rep.Synced:
		return "synced to DST (fdatasync)"
	case opts.NoSync:
		return "not synced (--sync none)"
	}
	return "NOT synced"
}

// byteCount: "12582912 bytes (12.0 MiB)", exact for scripts and readable.
func byteCount(n int64) string {
	return fmt.Sprintf("%d bytes (%s)", n, units.Format(n))
}

// message renders err on one line, as the command says it: a path or an
// argument may hold a newline, and errors.Join puts one between its
// errors.
func message(err error) string {
	return oneLine(flagWords.Replace(err.Error()))
}

func oneLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}

// interruptedText says what a signal stopped and what was written, for a
// single copy's line and a batch job's.
func interruptedText(sig syscall.Signal, opts copier.Options, rep copier.Report) string {
	return fmt.Sprintf("%s: stopped submitting and waited for the I/O in flight; %s written, %s",
		stoppedBy(sig, "interrupted"), byteCount(rep.Bytes), syncState(opts, rep))
}
