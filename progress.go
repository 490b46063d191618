package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/units"
	"golang.org/x/sys/unix"
)

// progressEvery is how often the live line is redrawn: a few times a
// second reads as live without costing anything.
const progressEvery = 250 * time.Millisecond

// startProgress draws one live line on stderr while the copy runs, counting
// completed writes, and returns the function that stops and erases it.
func startProgress(mode string, p *engine.Progress, total int64, stderr io.Writer) func() {
	if !wantProgress(mode, stderr) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		drawProgress(stderr, p, total, done)
	}()
	return func() {
		close(done)
		<-finished
	}
}

func wantProgress(mode string, w io.Writer) bool {
	switch mode {
	case "none":
		return false
	case "always":
		return true
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func drawProgress(w io.Writer, p *engine.Progress, total int64, done <-chan struct{}) {
	start := time.Now()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	var lastBytes int64
	lastTime := start
	for {
		select {
		case <-done:
			fmt.Fprint(w, "\r\033[K")
			return
		case now := <-tick.C:
			written, label := p.Done.Load(), ""
			if p.Phase() == engine.PhaseVerify {
				// The read-back after the copy: its own count, from 0.
				written, label = p.Verified.Load(), "verify "
			}
			if written < lastBytes {
				lastBytes = 0
			}
			rate := float64(written-lastBytes) / now.Sub(lastTime).Seconds()
			lastBytes, lastTime = written, now
			fmt.Fprintf(w, "\r\033[K%s%s", label, progressLine(written, total, rate))
		}
	}
}

// progressLine: "1.50 GiB / 4.00 GiB  37%  512.3 MB/s  ETA 0:05".
func progressLine(written, total int64, rate float64) string {
	pct := 100.0
	if total > 0 {
		pct = float64(written) * 100 / float64(total)
	}
	eta := "-"
	if rate > 0 && total >= written {
		secs := int(float64(total-written) / rate)
		eta = fmt.Sprintf("%d:%02d", secs/60, secs%60)
	}
	return fmt.Sprintf("%s / %s  %3.0f%%  %.1f MB/s  ETA %s", units.Format(written), units.Format(total), pct, rate/1e6, eta)
}
