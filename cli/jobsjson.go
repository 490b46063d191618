package cli

import (
	"encoding/json"
	"errors"
	"io"
	"syscall"

	"github.com/ringcp/ringcp/copier"
)

// The --json object of a batch: the envelope (command "jobs", the batch's
// outcome and exit code), then each job's object and the total. It is
// printed for every outcome: a batch refused before anything was written
// (each refused job with its error, the others not_started), a list that
// could not be read (no jobs), and a batch that ran.

// jsonJobHead opens a job's object; the job's copy object (copyObject)
// follows in the same object.
type jsonJobHead struct {
	Job     int    `json:"job"`
	Line    int    `json:"line"`
	Outcome string `json:"outcome"` // complete, refused, failed, interrupted, not_started
	// ExitCode is what this job alone would have exited with; the batch
	// has its own in the envelope.
	ExitCode int        `json:"exit_code"`
	Error    *jsonError `json:"error,omitempty"`
}

// jsonTotal adds up the jobs. Bytes and milliseconds are integers; the
// rate is the range's bytes over the batch's wall time, the data rate
// the data's alone.
type jsonTotal struct {
	Jobs               int   `json:"jobs"`
	Complete           int   `json:"complete"`
	Refused            int   `json:"refused"`
	Failed             int   `json:"failed"`
	Interrupted        int   `json:"interrupted"`
	NotStarted         int   `json:"not_started"`
	Length             int64 `json:"length"`
	Bytes              int64 `json:"bytes"`
	BytesRead          int64 `json:"bytes_read"`
	BytesHoles         int64 `json:"bytes_holes"`
	BytesZeroed        int64 `json:"bytes_zeroed"`
	Milliseconds       int64 `json:"milliseconds"`
	CPUMilliseconds    int64 `json:"cpu_milliseconds"`
	BytesPerSecond     int64 `json:"bytes_per_second"`
	DataBytesPerSecond int64 `json:"data_bytes_per_second"`
	BlockSize          int   `json:"block_size"`  // each shared buffer
	QueueDepth         int   `json:"queue_depth"` // shared buffers: requests in flight, all jobs together
	Parallel           int   `json:"parallel"`
	MaxRate            int64 `json:"max_rate"` // the cap on all the jobs together when they ended; 0 for none
	Synced             bool  `json:"synced"`   // every job complete and synced
	// Neighbour is what the good neighbour of the shared budget chose;
	// null when a job gave the queue depth (issue 27).
	Neighbour *copier.NeighbourReport `json:"neighbour"`
}

// jobObject is one job's object.
func jobObject(head jsonJobHead, o copier.Options, r copier.Report, err error) (json.RawMessage, error) {
	head.Error = errorJSON(err)
	return spliceObjects(head, copyObject(o, r, err))
}

// jobsRan are the objects of the jobs of a batch that ran.
func jobsRan(list []jobLine, opts []copier.Options, rep copier.BatchReport, sig syscall.Signal) []jobResult {
	out := make([]jobResult, len(rep.Jobs))
	for i, j := range rep.Jobs {
		err := j.Err
		if o := outcomeOf(j); sig != 0 && (o == outcomeInterrupted || o == outcomeNotStarted) {
			err = &interruptedError{sig: sig, err: err}
		}
		out[i] = jobResult{jsonJobHead{Job: i + 1, Line: list[i].line, Outcome: outcomeOf(j), ExitCode: exitCode(err)}, opts[i], j.Report, err}
	}
	return out
}

// jobResult is what a job's object is made of.
type jobResult struct {
	head jsonJobHead
	opts copier.Options
	rep  copier.Report
	err  error
}

func totalJSON(t jobsTotal, rep copier.BatchReport, b *copier.Batch) jsonTotal {
	total := jsonTotal{
		Jobs: len(rep.Jobs), Complete: t.count[outcomeComplete], Failed: t.count[outcomeFailed],
		Interrupted: t.count[outcomeInterrupted], NotStarted: t.count[outcomeNotStarted],
		Bytes: t.bytes, BytesRead: t.read, BytesHoles: t.holes, BytesZeroed: t.zeroed,
		Milliseconds: copier.Milliseconds(rep.Seconds), CPUMilliseconds: copier.Milliseconds(rep.CPUSeconds),
		BlockSize: rep.BlockSize, QueueDepth: rep.Slots, Parallel: b.Parallel, MaxRate: rep.MaxRate, Synced: t.allSynced,
		Neighbour: rep.Neighbour,
	}
	for _, j := range rep.Jobs {
		total.Length += j.Length
	}
	if rep.Seconds > 0 {
		total.BytesPerSecond = int64(float64(t.written)/rep.Seconds + 0.5)
		total.DataBytesPerSecond = int64(float64(t.bytes)/rep.Seconds + 0.5)
	}
	return total
}

// writeJobsJSON prints the batch's object and returns err, its outcome.
func writeJobsJSON(stdout io.Writer, err error, jobs []jobResult, total jsonTotal) error {
	objs := make([]json.RawMessage, len(jobs))
	for i, j := range jobs {
		o, jerr := jobObject(j.head, j.opts, j.rep, j.err)
		if jerr != nil {
			return errors.Join(err, jerr)
		}
		objs[i] = o
	}
	return writeObject(stdout, newEnvelope("jobs", err), err, struct {
		Jobs  []json.RawMessage `json:"jobs"`
		Total jsonTotal         `json:"total"`
	}{objs, total})
}

// jobsRefused are the objects of a batch refused before anything was
// written: each refused job with its refusal, the others not started.
func jobsRefused(list []jobLine, opts []copier.Options, why map[int]error) ([]jobResult, jsonTotal) {
	out := make([]jobResult, len(list))
	total := jsonTotal{Jobs: len(list)}
	for i, l := range list {
		head := jsonJobHead{Job: i + 1, Line: l.line, Outcome: outcomeNotStarted, ExitCode: exitRefused}
		err := why[i]
		if err != nil {
			head.Outcome = "refused"
			total.Refused++
		} else {
			total.NotStarted++
		}
		o := copier.Options{Src: l.src, Dst: l.dst}
		if i < len(opts) {
			o = opts[i]
		}
		out[i] = jobResult{head, o, copier.Report{}, err}
	}
	return out, total
}
