package cli

import (
	"io"
	"math"
	"sync"
	"time"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/copier"
)

// The progress of a sync across hosts, in every --progress format (the
// human line, json, qemu, percent): the bytes of SRC compared with DST's
// digests so far, out of SRC's size (known once the peer said it, for a
// pull), the rate over the whole run, and BytesData the bytes of DST
// changed. It is a copier.Status like a copy's, so that what parses a
// copy's progress parses a sync's.

// syncMeter feeds a sink from a blocksync.Progress until ended.
type syncMeter struct {
	sink  progressSink
	prog  *blocksync.Progress
	read  func() int64 // bytes of this host's end read so far
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
}

// startSyncProgress starts the chosen format; the function it returns
// stops it, with a last line (phase done when the sync completed).
func startSyncProgress(pc progressConfig, prog *blocksync.Progress, read func() int64, stdout, stderr io.Writer) func(complete bool) {
	sink, every := newSink(pc, stdout, stderr)
	if sink == nil {
		return func(bool) {}
	}
	if pc.interval > 0 {
		every = pc.interval
	}
	m := &syncMeter{sink: sink, prog: prog, read: read, start: time.Now(), stop: make(chan struct{})}
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
				sink.update(m.status(copier.PhaseCopy))
			}
		}
	}()
	return func(complete bool) {
		close(m.stop)
		m.wg.Wait()
		ph := copier.PhaseCopy
		if complete {
			ph = copier.PhaseDone
		}
		sink.update(m.status(ph))
		sink.end()
	}
}

func (m *syncMeter) status(ph copier.Phase) copier.Status {
	total := m.prog.Total.Load()
	s := copier.Status{Phase: ph, BytesDone: min(m.prog.Compared.Load(), max(total, 0)), BytesTotal: total,
		BytesData: m.prog.Changed.Load(), BytesRead: m.read(), ETASeconds: -1}
	secs := time.Since(m.start).Seconds()
	s.Seconds = math.Round(secs*1000) / 1000
	if secs > 0 {
		s.BytesPerSecond = math.Floor(float64(s.BytesDone) / secs)
	}
	switch {
	case ph == copier.PhaseDone:
		s.BytesDone, s.Percent, s.ETASeconds = total, 100, 0
	case total > 0:
		s.Percent = min(math.Floor(float64(s.BytesDone)*10000/float64(total))/100, 99.99)
		if s.BytesPerSecond > 0 {
			s.ETASeconds = math.Round(float64(total-s.BytesDone)/s.BytesPerSecond*10) / 10
		}
	}
	return s
}
