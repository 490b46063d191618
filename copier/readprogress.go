package copier

import (
	"sync"
	"time"

	"github.com/ringcp/ringcp/engine"
)

// The progress of Compare and Checksum (ReadOptions.OnProgress): a
// Status in phase verify every ProgressInterval, the bytes of the range
// read and checked (holes a checksum skips included) out of the range,
// and once more at the end, in phase done when the pass completed.

// readMeter reports a read pass's progress until stopped.
type readMeter struct {
	on      func(Status)
	checked *engine.Progress // Verified: the bytes read and checked, and holes skipped
	job     *engine.Progress // the pass's own counters: Read
	total   int64
	start   time.Time
	stop    chan struct{}
	wg      sync.WaitGroup
}

// startReadProgress starts calling o.OnProgress, if set, for a pass over
// total bytes, checked counting them; end stops it.
func startReadProgress(o ReadOptions, checked, job *engine.Progress, total int64) *readMeter {
	m := &readMeter{on: o.OnProgress, checked: checked, job: job, total: total, start: time.Now(), stop: make(chan struct{})}
	if m.on == nil {
		return m
	}
	every := o.ProgressInterval
	if every <= 0 {
		every = DefaultProgressInterval
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-tick.C:
				m.on(m.status(PhaseVerify))
			}
		}
	}()
	return m
}

func (m *readMeter) status(ph Phase) Status {
	s := Status{Phase: ph, BytesDone: min(m.checked.Verified.Load(), m.total), BytesTotal: m.total, BytesRead: m.job.Read.Load()}
	s.Percent = percent(s.BytesDone, s.BytesTotal, ph)
	secs := time.Since(m.start).Seconds()
	s.Seconds = roundTo(secs, 3)
	if secs > 0 {
		s.BytesPerSecond = float64(int64(float64(s.BytesDone) / secs))
	}
	s.ETASeconds = eta(s)
	return s
}

// end stops the reports and gives the last: done when the pass
// completed.
func (m *readMeter) end(completed bool) {
	if m.on == nil {
		return
	}
	close(m.stop)
	m.wg.Wait()
	ph := PhaseVerify
	if completed {
		ph = PhaseDone
	}
	m.on(m.status(ph))
}
