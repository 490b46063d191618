package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ringcp/ringcp/copier"
)

// The live line of a batch: the single copy's line for all the jobs
// together, then each running job's share done:
//
//	1.50 GiB / 4.00 GiB  37%  512.3 MB/s  ETA 0:05  [1: 45%  3: 12%]
//
// It reads only Batch.Status, so another renderer (a JSON progress
// stream) can take its place by reading the same.

// maxShownJobs bounds the running jobs the line lists: beyond it a count
// keeps the line on one terminal row.
const maxShownJobs = 6

// startJobsProgress draws the batch's line while it runs where a single
// copy's human line would go (newSink: stderr or --progress-fd, as often
// as --progress-interval says), or writes a machine format (jobsMachine),
// and returns the function that stops and erases it.
func startJobsProgress(pc progressConfig, b *copier.Batch, stdout, stderr io.Writer) func() {
	sink, every := newSink(pc, stdout, stderr)
	if pc.interval > 0 {
		every = pc.interval
	}
	human, ok := sink.(*humanSink)
	if sink != nil && !ok {
		return startJobsMachine(sink, b, every)
	}
	if !ok {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		drawJobsProgress(human.w, b, every, done)
	}()
	return func() {
		close(done)
		<-finished
	}
}

func drawJobsProgress(w io.Writer, b *copier.Batch, every time.Duration, done <-chan struct{}) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var lastBytes int64
	lastTime := time.Now()
	for {
		select {
		case <-done:
			fmt.Fprint(w, "\r\033[K")
			return
		case now := <-tick.C:
			st := b.Status()
			written, total := statusSum(st)
			rate := float64(written-lastBytes) / now.Sub(lastTime).Seconds()
			lastBytes, lastTime = written, now
			fmt.Fprintf(w, "\r\033[K%s%s", batchLine(written, total, rate), runningJobs(st))
		}
	}
}

// batchLine is the single copy's line for the jobs together.
func batchLine(done, total int64, rate float64) string {
	s := copier.Status{Phase: copier.PhaseCopy, BytesDone: done, BytesTotal: total, BytesPerSecond: rate, ETASeconds: -1}
	if total > 0 {
		s.Percent = min(99.99, float64(done)*100/float64(total))
	}
	if rate > 0 {
		s.ETASeconds = float64(total-done) / rate
	}
	return humanLine(s)
}

func statusSum(st []copier.JobStatus) (done, total int64) {
	for _, s := range st {
		done, total = done+s.Done, total+s.Length
	}
	return done, total
}

// runningJobs: "  [1: 45%  3: 12%  +2]", jobs numbered from 1.
func runningJobs(st []copier.JobStatus) string {
	var shown []string
	more := 0
	for i, s := range st {
		switch {
		case s.State != copier.JobRunning:
		case len(shown) == maxShownJobs:
			more++
		default:
			pct := 100.0
			if s.Length > 0 {
				pct = float64(s.Done) * 100 / float64(s.Length)
			}
			shown = append(shown, fmt.Sprintf("%d: %.0f%%", i+1, pct))
		}
	}
	if more > 0 {
		shown = append(shown, fmt.Sprintf("+%d", more))
	}
	if len(shown) == 0 {
		return ""
	}
	return "  [" + strings.Join(shown, "  ") + "]"
}
