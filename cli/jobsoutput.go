package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
	"golang.org/x/sys/unix"
)

// What became of a job of a batch, as the summary and --json say it.
const (
	outcomeComplete    = "complete"
	outcomeFailed      = "failed"
	outcomeInterrupted = "interrupted"
	outcomeNotStarted  = "not_started"
)

func outcomeOf(j copier.JobReport) string {
	switch {
	case j.Err == nil:
		return outcomeComplete
	case errors.Is(j.Err, copier.ErrNotStarted):
		return outcomeNotStarted
	case errors.Is(j.Err, context.Canceled):
		return outcomeInterrupted
	}
	return outcomeFailed
}

// jobsTotal counts the outcomes and adds up the figures of a batch.
type jobsTotal struct {
	count                               map[string]int
	bytes, read, holes, zeroed, written int64
	allSynced                           bool
}

func totalOf(rep copier.BatchReport) jobsTotal {
	t := jobsTotal{count: map[string]int{}, allSynced: true}
	for _, j := range rep.Jobs {
		t.count[outcomeOf(j)]++
		t.bytes, t.read, t.holes, t.zeroed = t.bytes+j.Bytes, t.read+j.BytesRead, t.holes+j.BytesHoles, t.zeroed+j.BytesZeroed
		t.allSynced = t.allSynced && j.Err == nil && j.Synced
	}
	t.written = t.bytes + t.holes + t.zeroed
	return t
}

// errJobsIncomplete is the outcome of a batch in which a job did not
// complete (each job's line said why): exit 1, or 128+signal.
var errJobsIncomplete = errors.New("not every job is complete")

// reportJobs prints each job's outcome and the total (or, with --json,
// the JSON object on stdout and the jobs that did not complete on
// stderr) and returns the outcome, reported: nil when every job is
// complete, an interruption when a signal stopped some, else a failure.
func reportJobs(stdout, stderr io.Writer, cfg config, list []jobLine, opts []copier.Options, b *copier.Batch, rep copier.BatchReport, sig syscall.Signal) error {
	t := totalOf(rep)
	for i, j := range rep.Jobs {
		if !cfg.json || j.Err != nil {
			printJob(stderr, i, list[i], opts[i], j, sig)
		}
	}
	var err error
	switch {
	case t.count[outcomeComplete] == len(rep.Jobs):
	case sig != 0:
		err = &interruptedError{sig: sig, err: &reported{errJobsIncomplete}}
	default:
		err = &reported{errJobsIncomplete}
	}
	if cfg.json {
		return writeJobsJSON(stdout, err, jobsRan(list, opts, rep, sig), totalJSON(t, rep, b))
	}
	printTotal(stderr, t, rep)
	return err
}

// printJob is a job's line and, when it did not complete, what its DST
// holds: the words of a single copy's, each line naming its job.
func printJob(w io.Writer, i int, l jobLine, opts copier.Options, j copier.JobReport, sig syscall.Signal) {
	fmt.Fprintf(w, "ringcp: job %d (line %d) %s -> %s: ", i+1, l.line, quoteWord(shown(l.src)), quoteWord(l.dst))
	switch outcomeOf(j) {
	case outcomeComplete:
		total := rangeDone(j.Report)
		fmt.Fprintf(w, "copied %s in %.2f s (%s), engine %s%s%s%s%s\n", units.Format(total), j.Seconds,
			units.Rate(total, j.Seconds), j.Engine, sparseNote(j.Report), fallbackNote(j.Report), slowdownNote(j.Report), verifiedNote(j.Report))
		return
	case outcomeNotStarted:
		fmt.Fprintf(w, "not started (%s); DST untouched\n", stoppedBy(sig, "the batch stopped"))
		return
	case outcomeInterrupted:
		fmt.Fprintln(w, stopText(sig, opts, j.Report, j.Err))
	default:
		fmt.Fprintf(w, "failed: %s\n", message(j.Err))
	}
	if line := dstState(opts, j.Report); line != "" {
		fmt.Fprintf(w, "ringcp: job %d: DST %s %s\n", i+1, l.dst, line)
	}
}

// verifiedNote is a complete job's word on --verify (a single copy says
// it on a line of its own, printTrust); "" without it.
func verifiedNote(r copier.Report) string {
	if r.Verify == nil {
		return ""
	}
	return fmt.Sprintf("; verified: DST reads back as SRC was read (%s)", r.Verify.How)
}

func stoppedBy(sig syscall.Signal, otherwise string) string {
	if sig == 0 {
		return otherwise
	}
	return "interrupted by " + unix.SignalName(sig)
}

// printTotal: "ringcp: total: 4 jobs, 3 complete, 1 failed: 3.00 GiB in
// 4.20 s (730.0 MB/s), CPU 1.20 s, 8 x 8.00 MiB buffers shared", and,
// as a single copy's summary says it, the cap on the jobs together in
// force at the end ("; capped at 100 MiB/s (--max-rate)"): the jobs'
// lines do not, the cap being the batch's.
func printTotal(w io.Writer, t jobsTotal, rep copier.BatchReport) {
	counts := []string{fmt.Sprintf("%d jobs", len(rep.Jobs))}
	for _, o := range []string{outcomeComplete, outcomeFailed, outcomeInterrupted, outcomeNotStarted} {
		if n := t.count[o]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, strings.ReplaceAll(o, "_", " ")))
		}
	}
	fmt.Fprintf(w, "ringcp: total: %s: %s in %.2f s (%s), CPU %.2f s, %d x %s buffers shared%s\n",
		strings.Join(counts, ", "), units.Format(t.written), rep.Seconds, units.Rate(t.written, rep.Seconds),
		rep.CPUSeconds, rep.Slots, units.Format(int64(rep.BlockSize)), batchCapNote(rep.MaxRate)+heldNote(rep.Neighbour))
}

// batchCapNote is the total line's word on the cap on the jobs together;
// "" for none.
func batchCapNote(bps int64) string {
	if bps <= 0 {
		return ""
	}
	return "; " + capText(bps)
}
