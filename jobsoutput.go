package main

import (
	"context"
	"encoding/json"
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
	if cfg.json {
		if err := writeJobsJSON(stdout, opts, list, b, rep, t); err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
	} else {
		printTotal(stderr, t, rep)
	}
	switch {
	case t.count[outcomeComplete] == len(rep.Jobs):
		return nil
	case sig != 0:
		return &interruptedError{sig: sig, err: &reported{errJobsIncomplete}}
	}
	return &reported{errJobsIncomplete}
}

// printJob is a job's line and, when it did not complete, what its DST
// holds: the words of a single copy's, each line naming its job.
func printJob(w io.Writer, i int, l jobLine, opts copier.Options, j copier.JobReport, sig syscall.Signal) {
	fmt.Fprintf(w, "ringcp: job %d (line %d) %s -> %s: ", i+1, l.line, quoteWord(l.src), quoteWord(l.dst))
	switch outcomeOf(j) {
	case outcomeComplete:
		total := rangeDone(j.Report)
		fmt.Fprintf(w, "copied %s in %.2f s (%s), engine %s%s%s\n", units.Format(total), j.Seconds,
			units.Rate(total, j.Seconds), j.Engine, sparseNote(j.Report), fallbackNote(j.Report))
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

func stoppedBy(sig syscall.Signal, otherwise string) string {
	if sig == 0 {
		return otherwise
	}
	return "interrupted by " + unix.SignalName(sig)
}

// printTotal: "ringcp: total: 4 jobs, 3 complete, 1 failed: 3.00 GiB in
// 4.20 s (730.0 MB/s), CPU 1.20 s, 8 x 8.00 MiB buffers shared".
func printTotal(w io.Writer, t jobsTotal, rep copier.BatchReport) {
	counts := []string{fmt.Sprintf("%d jobs", len(rep.Jobs))}
	for _, o := range []string{outcomeComplete, outcomeFailed, outcomeInterrupted, outcomeNotStarted} {
		if n := t.count[o]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, strings.ReplaceAll(o, "_", " ")))
		}
	}
	fmt.Fprintf(w, "ringcp: total: %s: %s in %.2f s (%s), CPU %.2f s, %d x %s buffers shared\n",
		strings.Join(counts, ", "), units.Format(t.written), rep.Seconds, units.Rate(t.written, rep.Seconds),
		rep.CPUSeconds, rep.Slots, units.Format(int64(rep.BlockSize)))
}

// jsonJobs is the --json object of a batch. Field names are a stable
// interface for integrations: add, never rename.
type jsonJobs struct {
	Jobs  []jsonJob `json:"jobs"`
	Total jsonTotal `json:"total"`
}

// jsonJob is a single copy's object plus where the job is in the list
// and what became of it.
type jsonJob struct {
	Job     int    `json:"job"`
	Line    int    `json:"line"`
	Outcome string `json:"outcome"` // complete, failed, interrupted, not_started
	// ExitCode hides the single copy's: the batch has one exit code.
	ExitCode int `json:"exit_code,omitempty"`
	jsonReport
}

type jsonTotal struct {
	Jobs           int     `json:"jobs"`
	Complete       int     `json:"complete"`
	Failed         int     `json:"failed"`
	Interrupted    int     `json:"interrupted"`
	NotStarted     int     `json:"not_started"`
	Bytes          int64   `json:"bytes"`
	BytesRead      int64   `json:"bytes_read"`
	BytesHoles     int64   `json:"bytes_holes"`
	BytesZeroed    int64   `json:"bytes_zeroed"`
	Seconds        float64 `json:"seconds"`
	BytesPerSecond float64 `json:"bytes_per_second"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	BlockSize      int     `json:"block_size"`  // each shared buffer
	QueueDepth     int     `json:"queue_depth"` // shared buffers: requests in flight, all jobs together
	Parallel       int     `json:"parallel"`
	MaxRate        int64   `json:"max_rate"` // the cap on all the jobs together when they ended; 0 for none
	Synced         bool    `json:"synced"`   // every job complete and synced
}

func writeJobsJSON(stdout io.Writer, opts []copier.Options, list []jobLine, b *copier.Batch, rep copier.BatchReport, t jobsTotal) error {
	out := jsonJobs{Jobs: make([]jsonJob, len(rep.Jobs)), Total: jsonTotal{
		Jobs: len(rep.Jobs), Complete: t.count[outcomeComplete], Failed: t.count[outcomeFailed],
		Interrupted: t.count[outcomeInterrupted], NotStarted: t.count[outcomeNotStarted],
		Bytes: t.bytes, BytesRead: t.read, BytesHoles: t.holes, BytesZeroed: t.zeroed,
		Seconds: rep.Seconds, CPUSeconds: rep.CPUSeconds, BlockSize: rep.BlockSize, QueueDepth: rep.Slots,
		Parallel: b.Parallel, MaxRate: rep.MaxRate, Synced: t.allSynced,
	}}
	if rep.Seconds > 0 {
		out.Total.BytesPerSecond = float64(t.bytes) / rep.Seconds
	}
	for i, j := range rep.Jobs {
		out.Jobs[i] = jsonJob{Job: i + 1, Line: list[i].line, Outcome: outcomeOf(j), jsonReport: toJSON(opts[i], j.Report, j.Err)}
	}
	return json.NewEncoder(stdout).Encode(out)
}
