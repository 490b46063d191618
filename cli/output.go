package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/internal/units"
)

// copyObject is the copy's --json body: the library's Report, with what
// the command line asked (the ends, the range) where a refusal came
// before the copy measured them.
func copyObject(o copier.Options, r copier.Report, err error) copier.Report {
	if r.Src == "" && r.Dst == "" {
		r.Src, r.Dst, r.SrcOffset, r.DstOffset = shown(o.Src), o.Dst, o.SrcOffset, o.DstOffset
	}
	var refused *copier.RefusedError
	if errors.As(err, &refused) && r.Length == 0 {
		r.Length = refused.Length
	}
	return r
}

// writeJSON prints the one --json object for a copy; err, when not nil,
// is why it did not complete.
func writeJSON(stdout io.Writer, o copier.Options, r copier.Report, err error) error {
	command := "copy"
	if o.Sync {
		command = "sync" // the same fields, and changed
	}
	return writeObject(stdout, newEnvelope(command, err), err, copyObject(o, r, err))
}

// shown is an operand as the command prints it: a URL without the
// credentials it may hold (its userinfo's password, a presigned
// signature; the password of any scheme's URL, ssh:// or nbd://),
// anything else as given.
func shown(operand string) string { return httpobj.RedactOperand(operand) }

// rangeDone is how much of the range the copy finished: data written,
// holes left and zeros made.
func rangeDone(r copier.Report) int64 { return r.RangeDone() }

// printSummary is the one human line at the end.
func printSummary(w io.Writer, r copier.Report, verb string) {
	total := rangeDone(r)
	fmt.Fprintf(w, "ringcp: %s %s in %.2f s (%s), CPU %.2f s, engine %s%s%s%s\n",
		verb, units.Format(total), r.Seconds, units.Rate(total, r.Seconds), r.CPUSeconds, r.Engine,
		sparseNote(r), fallbackNote(r), slowdownNote(r)+heldNote(r.Neighbour))
}

// slowdownNote says what held the copy back on purpose, so that a rate
// below the disks' is not taken for a slow disk: the cap (--max-rate,
// ringcp rate, SIGUSR2) in force at the end, and what --yield cut.
func slowdownNote(r copier.Report) string {
	var parts []string
	if r.MaxRate > 0 {
		parts = append(parts, capText(r.MaxRate))
	}
	if y := r.Yield; y != nil && y.Cuts > 0 {
		what := fmt.Sprintf("depth down to %d", y.LowestDepth)
		if y.LowestRate > 0 {
			what += ", rate to " + units.Format(y.LowestRate) + "/s"
		}
		parts = append(parts, fmt.Sprintf("yielded to other I/O for %.1f s (--yield: %d cuts, %s)", y.CutSeconds, y.Cuts, what))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")

}

// capText is how a summary says the cap in force at the end: a single
// copy's, and a batch's total line for the cap on its jobs together.
func capText(bps int64) string { return "capped at " + units.Format(bps) + "/s (--max-rate)" }

// heldNote says in the summary when others held the copy back (the good
// neighbour, issue 27).
func heldNote(n *copier.NeighbourReport) string {
	if held := n.Held(); held != "" {
		return "; " + held
	}
	return ""
}

// sparseNote splits the total when not everything was data.
func sparseNote(r copier.Report) string {
	if r.BytesHoles == 0 && r.BytesZeroed == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s data, %s holes, %s zeroed)", units.Format(r.Bytes), units.Format(r.BytesHoles), units.Format(r.BytesZeroed))
}

func fallbackNote(r copier.Report) string {
	if r.FallbackReason == "" {
		return ""
	}
	return " (" + r.FallbackReason + ")"
}
