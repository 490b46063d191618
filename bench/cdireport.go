package main

import (
	"fmt"
	"io"
	"strings"
)

// Issue 26's targets for ringcp cdi-importer against CDI's pipeline on
// the same import: at least 1.5x faster, at most half the CPU, at most a
// quarter of the peak memory (page cache included).
const (
	cdiTimeRatio = 1 / 1.5
	cdiCPURatio  = 0.5
	cdiMemRatio  = 0.25
)

// writeCDITargets says, under a cdi workload's table, how ringcp
// cdi-importer did against the targets: medians over rounds of its time,
// CPU and memory peak over the pipeline's in the same round.
func writeCDITargets(w io.Writer, runs []*Run, quick bool) {
	ratio := func(of func(*Run) float64) float64 {
		return roundRatioOf(runs, "ringcp-cdi", "cdi-qemu-img", of)
	}
	lines := []string{
		target("time over CDI's pipeline", ratio(func(r *Run) float64 { return r.Wall.Seconds() }), cdiTimeRatio),
		target("CPU over CDI's pipeline", ratio(func(r *Run) float64 { return r.CPU().Seconds() }), cdiCPURatio),
		target("memory peak (page cache included) over CDI's pipeline", ratio(func(r *Run) float64 { return float64(r.MemPeak) }), cdiMemRatio),
	}
	for _, r := range runs {
		if r.Err == nil && r.MemPeak > 0 {
			lines = append(lines, fmt.Sprintf("%s round %d peak %.0f MiB", r.Tool, r.Round, mib(r.MemPeak)))
		}
	}
	note := ""
	if quick {
		note = " (quick mode: the figures say nothing)"
	}
	fmt.Fprintf(w, "Targets of ringcp cdi-importer%s: %s.\n\n", note, strings.Join(lines, "; "))
}

// roundRatioOf is the median over rounds of of(a's run) over of(b's),
// both good; NaN when no round has both.
func roundRatioOf(runs []*Run, a, b string, of func(*Run) float64) float64 {
	got := map[string]map[int]float64{a: {}, b: {}}
	for _, r := range runs {
		if m, ok := got[r.Tool]; ok && r.Err == nil {
			m[r.Round] = of(r)
		}
	}
	var ratios []float64
	for round, va := range got[a] {
		if vb, ok := got[b][round]; ok && vb > 0 {
			ratios = append(ratios, va/vb)
		}
	}
	return medianOr(ratios)
}
