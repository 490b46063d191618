package main

import (
	"fmt"
	"io"
	"strings"
)

// writeWebTargets sums the web workloads up against issue 23's targets:
// on loopback at least the best peer's speed at no more CPU; at 20 ms at
// least twice curl's speed; a compressed image at least 1.3 times its
// pipeline's; the qcow2 import against qemu-img convert from the URL.
// Each ratio is the median over rounds of the ratio within a round.
func (b *bench) writeWebTargets(w io.Writer) {
	var rows []string
	for _, c := range webCases {
		runs := b.runsOf(c.name())
		if len(runs) == 0 {
			continue
		}
		peer, target := c.peer(runs)
		if peer == "" {
			continue
		}
		speed, cpu := againstPeer(runs, peer)
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |", c.name(), peer, fmtRatio(speed), fmtRatio(cpu), target))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "### HTTP: ringcp against its targets\n\n"+
		"Speed is the peer's time over ringcp's, CPU ringcp's over the peer's, each the median over rounds "+
		"of the ratio within a round.\n\n"+
		"| workload | peer | speed × peer | CPU / peer | target |\n|---|---|---:|---:|---|\n%s\n\n", strings.Join(rows, "\n"))
}

// peer is what the case is held against, and the target.
func (c webCase) peer(runs []*Run) (string, string) {
	switch {
	case c.qcow2:
		return "qemu-img-http", "speed ≥ 1.00"
	case c.pack == "xz":
		return "curl-xz-dd", "speed ≥ 1.30 where the file has several blocks"
	case c.pack == "zst":
		return "curl-zstd-dd", "speed ≥ 1.30 where the file has several frames"
	case c.delay > 0:
		return "curl", "speed ≥ 2.00"
	}
	best, bestMBps := "", 0.0
	for _, t := range []string{"curl", "wget", "aria2c", "qemu-img-http", "nbdcopy-curl"} {
		if m := toolMBps(runs, t); m > bestMBps {
			best, bestMBps = t, m
		}
	}
	return best, "speed ≥ 1.00 at CPU ≤ 1.00 (the best peer)"
}
