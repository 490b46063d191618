package cli

import (
	"encoding/json"
	"io"
	"math"
	"time"

	"github.com/ringcp/ringcp/copier"
)

// The machine progress of a batch (--jobs with --progress json, qemu or
// percent): qemu's and nbdcopy's records count the jobs together, as one
// copy of all their bytes; json writes, every interval, a line per job
// and a line for the total:
//
//	{"job":1,"state":"running","bytes_done":1048576,"bytes_total":4194304,"percent":25}
//	{"total":true,"jobs":2,"waiting":0,"running":1,"done":1,"bytes_done":5242880,"bytes_total":8388608,"percent":62.5,"bytes_per_second":10485760}
//
// Percent has two decimals, rounded down, and is 100 only when every
// byte of every job is done (after the batch ended).

// jsonJobProgress is a job's line of --progress json with --jobs.
type jsonJobProgress struct {
	Job        int     `json:"job"`   // from 1, in the list's order
	State      string  `json:"state"` // waiting, running, done
	BytesDone  int64   `json:"bytes_done"`
	BytesTotal int64   `json:"bytes_total"`
	Percent    float64 `json:"percent"`
}

// jsonTotalProgress is the batch's line.
type jsonTotalProgress struct {
	Total          bool    `json:"total"` // always true: tells the line from a job's
	Jobs           int     `json:"jobs"`
	Waiting        int     `json:"waiting"`
	Running        int     `json:"running"`
	Done           int     `json:"done"`
	BytesDone      int64   `json:"bytes_done"`
	BytesTotal     int64   `json:"bytes_total"`
	Percent        float64 `json:"percent"`
	BytesPerSecond int64   `json:"bytes_per_second"` // since the batch started
}

// startJobsMachine writes sink's format every interval until the
// returned function is called, which writes the last records and ends it.
func startJobsMachine(sink progressSink, b *copier.Batch, every time.Duration) func() {
	start := time.Now()
	done, finished := make(chan struct{}), make(chan struct{})
	emit := func(final bool) { emitJobs(sink, b.Status(), time.Since(start), final) }
	go func() {
		defer close(finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				emit(false)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		emit(true)
		sink.end()
	}
}

// emitJobs writes one round of records.
func emitJobs(sink progressSink, st []copier.JobStatus, since time.Duration, final bool) {
	done, total := statusSum(st)
	t := jsonTotalProgress{Total: true, Jobs: len(st), BytesDone: done, BytesTotal: total, Percent: percentOf(done, total, final)}
	if s := since.Seconds(); s > 0 {
		t.BytesPerSecond = int64(float64(done) / s)
	}
	js, ok := sink.(*jsonSink)
	for i, s := range st {
		switch s.State {
		case copier.JobWaiting:
			t.Waiting++
		case copier.JobRunning:
			t.Running++
		default:
			t.Done++
		}
		if ok {
			writeLine(js.w, jsonJobProgress{Job: i + 1, State: jobStateWord(s.State), BytesDone: s.Done, BytesTotal: s.Length,
				Percent: percentOf(s.Done, s.Length, s.State == copier.JobDone)})
		}
	}
	if ok {
		writeLine(js.w, t)
		return
	}
	sink.update(copier.Status{Phase: copier.PhaseCopy, BytesDone: done, BytesTotal: total, Percent: t.Percent})
}

// percentOf: two decimals, rounded down; 100 only when ended is true and
// every byte is done (an empty range ended is 100 too).
func percentOf(done, total int64, ended bool) float64 {
	if total <= 0 || done >= total {
		if ended {
			return 100
		}
		if total > 0 {
			return 99.99
		}
		return 0
	}
	return math.Floor(float64(done)*10000/float64(total)) / 100
}

func jobStateWord(s copier.JobState) string {
	switch s {
	case copier.JobWaiting:
		return "waiting"
	case copier.JobRunning:
		return "running"
	}
	return "done"
}

func writeLine(w io.Writer, v any) {
	b, _ := json.Marshal(v) // numbers and words: cannot fail
	w.Write(append(b, '\n'))
}
