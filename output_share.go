package main

import "github.com/ringcp/ringcp/copier"

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
