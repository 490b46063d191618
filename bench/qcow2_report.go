package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// writeQcow2Targets sums the qcow2 workloads up against issue 24's
// targets, against each peer that ran: on an uncompressed image at least
// the peer's speed at less CPU; on a compressed one at least 1.5 times its
// speed; a written image no larger than qemu-img's. Speed and CPU are the
// median over rounds of the ratio within a round, the image the largest
// over good rounds.
func (b *bench) writeQcow2Targets(w io.Writer) {
	var rows []string
	for _, name := range append(qcow2CaseNames(true), toQcow2Names()...) {
		runs := b.runsOf(name)
		for _, peer := range []string{"qemu-img", "qemu-nbd+nbdcopy"} {
			if !slices.ContainsFunc(runs, func(r *Run) bool { return r.Tool == peer }) {
				continue
			}
			rows = append(rows, qcow2TargetRow(name, peer, runs, b.cfg.Quick))
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "### qcow2: ringcp against its targets\n\n"+
		"Speed is the peer's time over ringcp's, CPU ringcp's over the peer's, each the median over rounds "+
		"of the ratio within a round; image is the size of ringcp's image over qemu-img's (the largest over "+
		"rounds). \"met\" is left out in quick mode, whose times mean nothing.\n\n"+
		"| workload | peer | speed × peer | CPU / peer | image / peer | target | met |\n"+
		"|---|---|---:|---:|---:|---|---|\n%s\n\n", strings.Join(rows, "\n"))
}

// qcow2TargetRow is one workload against one peer.
func qcow2TargetRow(name, peer string, runs []*Run, quick bool) string {
	speed, cpu := againstPeer(runs, peer)
	image := math.NaN()
	write := slices.Contains(toQcow2Names(), name)
	if write {
		image = ratioOr(imageBytes(runs, baseline), imageBytes(runs, peer))
	}
	compressed := strings.Contains(name, "zstd") || strings.Contains(name, "zlib")
	target, met := "speed ≥ 1.00 at CPU < 1.00", speed >= 1 && cpu < 1
	if compressed {
		target, met = "speed ≥ 1.50", speed >= 1.5
	}
	if write {
		target += ", image ≤ 1.00"
		met = met && image <= 1
	}
	verdict := map[bool]string{true: "yes", false: "**no**"}[met]
	if quick {
		verdict = "–"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |", name, peer, fmtRatio(speed), fmtRatio(cpu),
		fmtImageRatio(image), target, verdict)
}

// fmtImageRatio shows three decimals: the target is 1.000, and 0.4%
// over it would read 1.00 with two.
func fmtImageRatio(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.3f", x)
}

// ratioOr is a over b, NaN (shown "–") unless both were measured.
func ratioOr(a, b int64) float64 {
	if a <= 0 || b <= 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}
