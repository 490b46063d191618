package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
	"github.com/ringcp/ringcp/nbd"
)

// stoppedCopy reports a copy that did not complete, by a fault or a
// signal: what happened, then what DST holds now, so that nobody takes a
// partial DST for a copy. It returns the outcome, marked as reported.
func stoppedCopy(stderr io.Writer, opts copier.Options, rep copier.Report, err error, sig syscall.Signal) error {
	var canceled *copier.CanceledError
	if sig != 0 && errors.As(err, &canceled) {
		fmt.Fprintln(stderr, "ringcp: "+stopText(sig, opts, rep, err))
	} else {
		fmt.Fprintf(stderr, "ringcp: %s\n", message(err))
	}
	if line := dstState(opts, rep); line != "" {
		fmt.Fprintf(stderr, "ringcp: DST %s %s\n", opts.Dst, line)
	}
	if rep.StateDropped != "" {
		fmt.Fprintf(stderr, "ringcp: resume state %s removed: SRC changed while it was read, and nothing copied can be resumed; the same command copies again from the start (from a snapshot, or once nothing writes SRC)\n", rep.StateDropped)
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
		if opts.Dst == "-" {
			return fmt.Sprintf("(stdout): its reader got the first %s of the copy, in order; it is not a complete copy", byteCount(rep.Contiguous))
		}
		return fmt.Sprintf("kept: it holds the first %s of the copy and ends there; it is not a complete copy", byteCount(rep.Contiguous))
	case copier.DstPartial:
		if rep.Length > 0 && rep.Contiguous >= rep.Length {
			// Stopped after the copy: while checking it.
			return fmt.Sprintf("holds the whole copy, %s from offset %d, but %s was stopped: it is not known to read back as SRC",
				byteCount(rep.Contiguous), opts.DstOffset, checkName(opts))
		}
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
	case copier.DstMixed:
		held := ""
		if rep.PartialPath != "" {
			held = fmt.Sprintf(" (in %s)", rep.PartialPath)
		}
		part := "all " + byteCount(rep.Length) + " of the range"
		if rep.Contiguous < rep.Length {
			// Stopped or failed before its end, SRC changed before.
			part = "the first " + byteCount(rep.Contiguous) + " of the copy"
		}
		return fmt.Sprintf("holds%s %s from offset %d, read from a SRC that changed meanwhile: a mix of its old and new content, not a copy; do not use it",
			held, part, opts.DstOffset)
	}
	return "" // untouched: nothing to say
}

// syncState says whether what was written is durable: an export's by the
// server's FLUSH, a file's or device's by fdatasync.
func syncState(opts copier.Options, rep copier.Report) string {
	export := nbd.IsURI(opts.Dst)
	switch {
	case rep.Synced && export:
		return "flushed to DST (NBD FLUSH)"
	case rep.Synced:
		return "synced to DST (fdatasync)"
	case opts.NoSync:
		return "not synced (--sync none)"
	case export:
		return "NOT flushed"
	}
	return "NOT synced"
}

// checkName names the read passes after a copy that a stop can cut short.
func checkName(opts copier.Options) string {
	switch {
	case opts.Verify && opts.Checksum != nil:
		return "checking it (--checksum, --verify)"
	case opts.Verify:
		return "the verification"
	}
	return "completing SRC's checksum"
}

// byteCount: "12582912 bytes (12.0 MiB)", exact for scripts and readable.
func byteCount(n int64) string {
	return fmt.Sprintf("%d bytes (%s)", n, units.Format(n))
}

// message renders err on one line, as the command says it: the errors
// that errors.Join put together are set apart by "; " (it puts a newline
// between them), and a newline left, in a path or an argument, is
// written \n.
func message(err error) string {
	return oneLine(flagWords.Replace(joinedText(err)))
}

// joinedText is err's text with the parts of an errors.Join in it, at its
// end as a wrapper leaves them, separated by "; " instead of a newline.
func joinedText(err error) string {
	s := err.Error()
	var j interface{ Unwrap() []error }
	if !errors.As(err, &j) {
		return s
	}
	var raw, shown []string
	for _, e := range j.Unwrap() {
		if e != nil {
			raw, shown = append(raw, e.Error()), append(shown, joinedText(e))
		}
	}
	joined := strings.Join(raw, "\n")
	// Only errors.Join's text is its parts' with newlines between (an
	// fmt.Errorf with two %w also has several parts, in its own words).
	if je, ok := j.(error); !ok || je.Error() != joined || !strings.HasSuffix(s, joined) {
		return s
	}
	return s[:len(s)-len(joined)] + strings.Join(shown, "; ")
}

func oneLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}

// stopText says what a signal stopped, for a single copy's line and a
// batch job's: the copy, or a read pass after it (--verify, a resumed
// --checksum), which writes nothing and reads what is counted.
func stopText(sig syscall.Signal, opts copier.Options, rep copier.Report, err error) string {
	var canceled *copier.CanceledError
	if !errors.As(err, &canceled) || !canceled.Pass {
		return interruptedText(sig, opts, rep)
	}
	return fmt.Sprintf("%s after the copy: all %s written, %s; %s was stopped after %s checked of %s",
		stoppedBy(sig, "interrupted"), byteCount(rep.Bytes), syncState(opts, rep), checkName(opts),
		byteCount(canceled.Contiguous), units.Format(rep.Length))
}

// interruptedText says what a signal stopped and what was written.
func interruptedText(sig syscall.Signal, opts copier.Options, rep copier.Report) string {
	return fmt.Sprintf("%s: stopped submitting and waited for the I/O in flight; %s written, %s",
		stoppedBy(sig, "interrupted"), byteCount(rep.Bytes), syncState(opts, rep))
}
