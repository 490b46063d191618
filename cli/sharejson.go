package cli

// The --json fields of sharing a busy host: the cgroup limits the copy was
// fitted to and what yield did (the rate cap and the priority are plain
// fields of jsonReport).

import (
	"github.com/ringcp/ringcp/copier"
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
