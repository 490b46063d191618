package main

import (
	"fmt"
	"io"
	"math"
)

// writeBusy is the busy workload's table: each copy's speed, and what
// the foreground did beside it.
func writeBusy(w io.Writer, wl *Workload, runs []*Run, rate int64) {
	rows := summarizeBusy(runs)
	fmt.Fprintf(w, "### %s: %s (%s)\n\n", wl.Name, wl.Desc, sizeLabel(runs[0].Size))
	fmt.Fprintf(w, "Medians over rounds. \"of alone\" is the copy's MB/s over ringcp-alone's "+
		"(ringcp at its defaults with no foreground) in the same round; \"p99 × alone\" is the "+
		"foreground's p99 latency over its p99 with no copy (fg-alone) in the same round, \"IOPS of alone\" its IOPS over fg-alone's. "+
		"Capped copies (ringcp --max-rate, qemu-img -r) run at %s/s.\n\n", sizeLabel(rate))
	fmt.Fprintln(w, "| copy | ok | MB/s | of alone | foreground IOPS | IOPS of alone | p99 ms | p99 × alone |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		ok := fmt.Sprintf("%d/%d", r.OK, r.Runs)
		if r.OK < r.Runs {
			ok = "**FAILED** " + ok
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Tool, ok, whole(r.MBps), fmtPct(r.OfAlone),
			whole(r.IOPS), fmtPct(r.IOPSShare), fmtRatio(r.P99us/1e3), fmtRatio(r.P99xAlone))
	}
	fmt.Fprintf(w, "\n<details><summary>commands</summary>\n\n```\n")
	for _, r := range rows {
		fmt.Fprintf(w, "%-18s %s\n", r.Tool, r.Cmd)
	}
	fmt.Fprintf(w, "```\n</details>\n\n")
}

// whole is a whole number for a cell, "–" when unknown.
func whole(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.0f", x)
}
