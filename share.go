package main

// The command's side of sharing a busy host: --ioprio checked as the
// library takes it, and the --json fields of the rate cap, the cgroup
// limits and yield.

import (
	"fmt"
	"math"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
)

// jsonIOLimit is a cgroup I/O limit the copy was fitted to, in --json.
type jsonIOLimit struct {
	Disk      string   `json:"disk"`
	Side      string   `json:"side"`
	ReadBPS   uint64   `json:"read_bps"`
	WriteBPS  uint64   `json:"write_bps"`
	ReadIOPS  uint64   `json:"read_iops"`
	WriteIOPS uint64   `json:"write_iops"`
	Files     []string `json:"files"`
}

// ioLimitsJSON is never nil, so that --json says [] rather than null.
func ioLimitsJSON(ls []copier.IOLimit) []jsonIOLimit {
	out := []jsonIOLimit{}
	for _, l := range ls {
		out = append(out, jsonIOLimit{Disk: l.Disk, Side: l.Side, ReadBPS: l.ReadBPS, WriteBPS: l.WriteBPS,
			ReadIOPS: l.ReadIOPS, WriteIOPS: l.WriteIOPS, Files: l.Files})
	}
	return out
}

// jsonYield is what the yield controller did, in --json; null when
// --yield was not given.
type jsonYield struct {
	Cuts         int     `json:"cuts"`
	Raises       int     `json:"raises"`
	CutSeconds   float64 `json:"cut_seconds"`
	LowestDepth  int     `json:"lowest_depth"`
	LowestRate   int64   `json:"lowest_rate"`
	ProbeBaseSec float64 `json:"probe_base_seconds"`
	ProbeMaxSec  float64 `json:"probe_max_seconds"`
	OthersMax    float64 `json:"others_max_iops"`
	PSISomeMax   float64 `json:"psi_some_max"`
	PSIFullMax   float64 `json:"psi_full_max"`
}

func yieldJSON(y *copier.YieldReport) *jsonYield {
	if y == nil {
		return nil
	}
	return &jsonYield{Cuts: y.Cuts, Raises: y.Raises, CutSeconds: y.CutSeconds, LowestDepth: y.LowestDepth,
		LowestRate: y.LowestRate, ProbeBaseSec: y.ProbeBase, ProbeMaxSec: y.ProbeMax, OthersMax: y.OthersMax,
		PSISomeMax: y.PSISomeMax, PSIFullMax: y.PSIFullMax}
}

// checkIOPrio refuses an --ioprio the library would not take.
func checkIOPrio(s string) error {
	if _, err := engine.ParseIOPrio(s); err != nil {
		return fmt.Errorf("--ioprio: %w", err)
	}
	return nil
}

// jsonNeighbour is what the good neighbour chose, in --json; null when
// --queue-depth was given.
type jsonNeighbour struct {
	MinBytes        int64   `json:"min_bytes_in_flight"`
	MedianBytes     int64   `json:"median_bytes_in_flight"`
	MaxBytes        int64   `json:"max_bytes_in_flight"`
	LeastLatencySec float64 `json:"least_latency_seconds"`
	SoloRate        float64 `json:"solo_rate"`
	HeldSeconds     float64 `json:"held_seconds"`
	LowestShare     float64 `json:"lowest_share"`
	FloorSeconds    float64 `json:"floor_seconds"`
	Floor           float64 `json:"floor"`
	Samples         int     `json:"samples"`
	OthersSeconds   float64 `json:"others_seconds"`
}

func neighbourJSON(n *copier.NeighbourReport) *jsonNeighbour {
	if n == nil {
		return nil
	}
	return &jsonNeighbour{MinBytes: n.MinBytes, MedianBytes: n.MedianBytes, MaxBytes: n.MaxBytes,
		LeastLatencySec: round(n.LeastLatency, 6), SoloRate: math.Round(n.SoloRate), HeldSeconds: round(n.HeldSeconds, 2),
		LowestShare: round(n.LowestShare, 3), FloorSeconds: round(n.FloorSeconds, 2), Floor: n.Floor, Samples: n.Samples,
		OthersSeconds: round(n.OthersSeconds, 2)}
}

// heldNote says in the summary when others held the copy back.
func heldNote(n *copier.NeighbourReport) string {
	if held := n.Held(); held != "" {
		return "; " + held
	}
	return ""
}
