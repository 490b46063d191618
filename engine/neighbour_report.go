package engine

import (
	"slices"
	"time"
)

// NeighbourReport is what the controller chose during a copy.
type NeighbourReport struct {
	// MinBytes, MedianBytes and MaxBytes are the bytes the window let in
	// flight, over the copy's time; LeastLatency the least a request took.
	MinBytes, MedianBytes, MaxBytes int64
	LeastLatency                    time.Duration
	// SoloRate is the speed alone (every slot, nobody else on the disk),
	// bytes per second; 0 when never measured. BestRate is the most a
	// window moved beside others, Keep the share of the solo rate (of
	// BestRate, when less or unmeasured) the window aimed at.
	SoloRate, BestRate, Keep float64
	// HeldSeconds is the time others used the disk and the copy moved
	// under 90% of its solo speed, neither moving its rate cap nor
	// waiting on it (Sample.Paced); LowestShare the least share of it
	// then.
	HeldSeconds float64
	LowestShare float64
	// FloorSeconds is the time the copy moved under the floor (Floor of
	// its solo speed) and its window grew for it.
	FloorSeconds float64
	Floor        float64
	// Samples is how many samples it heard: 0 for a copy shorter than
	// one, which kept the window it started with.
	Samples int
	// OthersSeconds is the time others used the disks (Signals.Others).
	OthersSeconds float64
	// Windows is the time spent at each window, fewest bytes first: which
	// windows it held, and for how long.
	Windows []WindowTime
	// Restarts is how many times a growth started afresh: others came
	// (from the least window), a cap was lifted from a copy capped from
	// its start, or the best beside them was measured again (from the
	// window then).
	Restarts int
}

// WindowTime is the time a window of Bytes in flight was held.
type WindowTime struct {
	Bytes   int64
	Seconds float64
}

// account keeps what the report says. A judgement capped (the copy
// moved its cap, or waited on it) was held back by the cap, not by
// others.
func (n *Neighbour) account(dt time.Duration, thr float64, starved, capped bool) {
	if starved {
		n.rep.FloorSeconds += dt.Seconds()
	}
	if solo := n.soloRate(); !capped && n.phase != nbAlone && solo > 0 && thr < 0.9*solo {
		n.rep.HeldSeconds += dt.Seconds()
		share := thr / solo
		if n.rep.LowestShare == 0 || share < n.rep.LowestShare {
			n.rep.LowestShare = share
		}
	}
	if n.phase != nbAlone { // smoothed: one lucky judgement is not the most it moved
		n.rep.BestRate = max(n.rep.BestRate, n.best, n.thrAt[n.at])
	}
}

// Report is what the controller chose so far.
func (n *Neighbour) Report() NeighbourReport {
	r := n.rep
	r.SoloRate, r.Keep, r.Floor, r.LeastLatency = n.solo, n.keep, neighbourFloor, n.least
	var total time.Duration
	sizes := make([]int, 0, len(n.hist))
	for b, d := range n.hist {
		sizes = append(sizes, b)
		total += d
	}
	if len(sizes) == 0 { // not one sample yet: the window it starts with
		w := int64(n.Bytes())
		r.MinBytes, r.MedianBytes, r.MaxBytes = w, w, w
		return r
	}
	slices.Sort(sizes)
	for _, b := range sizes {
		r.Windows = append(r.Windows, WindowTime{Bytes: int64(b), Seconds: n.hist[b].Seconds()})
	}
	r.MinBytes, r.MaxBytes = int64(sizes[0]), int64(sizes[len(sizes)-1])
	var seen time.Duration
	for _, b := range sizes {
		seen += n.hist[b]
		if 2*seen >= total {
			r.MedianBytes = int64(b)
			break
		}
	}
	return r
}
