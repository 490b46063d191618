package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ringcp/ringcp/internal/units"
)

// writeSyncExtra is the sync workloads' part of the report: what each
// tool wrote to DST's device (the median over its good rounds) against
// the bytes that changed, rounded to 4 KiB blocks, and ringcp sync's
// time over each other tool's (the median of the per-round ratios). The
// issue's targets: at least 5x faster than a full copy on the local
// disk, at most 1.1x the changed bytes rounded to blocks written, at
// least 2x faster than rsync over ssh.
func writeSyncExtra(w io.Writer, runs []*Run) {
	written := map[string][]float64{}
	wall := map[string]map[int]time.Duration{}
	var names []string
	for _, r := range runs {
		if r.Err != nil {
			continue
		}
		if _, ok := wall[r.Tool]; !ok {
			wall[r.Tool] = map[int]time.Duration{}
			names = append(names, r.Tool)
		}
		written[r.Tool] = append(written[r.Tool], float64(r.DstWritten))
		wall[r.Tool][r.Round] = r.Wall
	}
	slices.Sort(names)
	sync := "ringcp-sync"
	if _, ok := wall[sync]; !ok {
		sync = "ringcp-sync-ssh"
	}
	fmt.Fprintf(w, "Changed: %s in 4 KiB blocks (what the default granule writes), %s in 64 KiB granules (what --granule 64K writes).\n\n",
		units.Format(syncChanged.blocks), units.Format(syncChanged.granules))
	fmt.Fprintln(w, "| tool | DST written MiB | × changed blocks | ringcp sync's time × |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, n := range names {
		wr := median(written[n])
		var ratios []float64
		for round, d := range wall[sync] {
			if o, ok := wall[n][round]; ok && d > 0 {
				ratios = append(ratios, o.Seconds()/d.Seconds())
			}
		}
		fmt.Fprintf(w, "| %s | %.1f | %s | %s |\n", n, wr/(1<<20), fmtRatio(wr/float64(max(syncChanged.blocks, 1))), fmtRatio(medianOr(ratios)))
	}
	fmt.Fprintln(w, "\n\"ringcp sync's time ×\" is the tool's wall time over ringcp sync's in the same round (the median over rounds): above 1, ringcp sync was faster.")
	fmt.Fprintln(w)
}
