package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
)

// jsonReport is the --json object. Field names are a stable interface for
// integrations: add, never rename.
type jsonReport struct {
	Src             string        `json:"src"`
	Dst             string        `json:"dst"`
	Engine          string        `json:"engine"`
	FallbackReason  string        `json:"fallback_reason"`
	Bytes           int64         `json:"bytes"`
	BytesRead       int64         `json:"bytes_read"`
	Seconds         float64       `json:"seconds"`
	BytesPerSecond  float64       `json:"bytes_per_second"`
	CPUSeconds      float64       `json:"cpu_seconds"`
	BlockSize       int           `json:"block_size"`
	QueueDepth      int           `json:"queue_depth"`
	DirectSrc       bool          `json:"direct_src"`
	DirectDst       bool          `json:"direct_dst"`
	BytesHoles      int64         `json:"bytes_holes"`
	BytesZeroed     int64         `json:"bytes_zeroed"`
	Offload         string        `json:"offload"`
	OffloadFallback string        `json:"offload_fallback"`
	Synced          bool          `json:"synced"`
	DstState        string        `json:"dst_state"`
	Contiguous      int64         `json:"contiguous"`
	Error           string        `json:"error,omitempty"`
	FixedBuffers    bool          `json:"fixed_buffers"`
	EngineDetail    string        `json:"engine_detail"`
	MaxRate         int64         `json:"max_rate"`
	AchievedRate    float64       `json:"achieved_rate"`
	IOPrio          string        `json:"ioprio"`
	IOLimits        []jsonIOLimit `json:"io_limits"`
	Yield           *jsonYield    `json:"yield"`
}

func toJSON(r copier.Report) jsonReport {
	j := jsonReport{
		Src: r.Src, Dst: r.Dst, Engine: r.Engine, FallbackReason: r.FallbackReason,
		Bytes: r.Bytes, BytesRead: r.BytesRead, Seconds: r.Seconds, CPUSeconds: r.CPUSeconds,
		BlockSize: r.BlockSize, QueueDepth: r.QueueDepth, DirectSrc: r.DirectSrc, DirectDst: r.DirectDst,
		BytesHoles: r.BytesHoles, BytesZeroed: r.BytesZeroed, Offload: r.Offload, OffloadFallback: r.OffloadFallback,
		Synced: r.Synced, DstState: r.DstState.String(), Contiguous: r.Contiguous, FixedBuffers: r.Caps.FixedBuffers, EngineDetail: r.Caps.Detail,
	}
	if r.Seconds > 0 {
		j.BytesPerSecond = float64(r.Bytes) / r.Seconds
	}
	j.MaxRate, j.AchievedRate, j.IOPrio, j.IOLimits = r.MaxRate, r.Rate(), r.IOPrio, ioLimitsJSON(r.IOLimits)
	j.Yield = yieldJSON(r.Yield)
	return j
}

// writeJSON prints the report; copyErr, when not nil, is why the copy did
// not complete, so integrations get one object on success and failure.
func writeJSON(stdout, stderr io.Writer, r copier.Report, copyErr error) int {
	j := toJSON(r)
	if copyErr != nil {
		j.Error = oneLine(copyErr)
	}
	enc := json.NewEncoder(stdout)
	if err := enc.Encode(j); err != nil {
		fmt.Fprintf(stderr, "ringcp: writing JSON: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// printSummary is the one human line at the end.
func printSummary(w io.Writer, r copier.Report, verb string) {
	total := r.Bytes + r.BytesHoles + r.BytesZeroed
	fmt.Fprintf(w, "ringcp: %s %s in %.2f s (%s), CPU %.2f s, engine %s%s%s\n",
		verb, units.Format(total), r.Seconds, units.Rate(total, r.Seconds), r.CPUSeconds, r.Engine,
		sparseNote(r), fallbackNote(r))
}

// sparseNote splits the total when not everything was data.
func sparseNote(r copier.Report) string {
	if r.BytesHoles == 0 && r.BytesZeroed == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s data, %s holes, %s zeroed)", units.Format(r.Bytes), units.Format(r.BytesHoles), units.Format(r.BytesZeroed))
}

func fallbackNote(r copier.Report) string {
	if r.FallbackReason == "" {
		return ""
	}
	return " (" + r.FallbackReason + ")"
}
