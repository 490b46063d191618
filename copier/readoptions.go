package copier

import (
	"time"

	"github.com/ringcp/ringcp/engine"
)

// ReadOptions describe a comparison of two files or devices (Compare), or
// the checksum of one (Checksum: Src alone).
type ReadOptions struct {
	Src, Dst   string
	SrcOffset  int64
	DstOffset  int64
	Length     int64 // with LengthSet; else to SRC's end
	LengthSet  bool
	BlockSize  int // 0: chosen
	QueueDepth int // 0: chosen
	Engine     EngineChoice
	Direct     DirectMode
	Progress   *engine.Progress // Verified counts what was read and checked
	// Sum makes the block checksum Checksum computes, given the range's
	// length (see Options.Checksum); nil: the oVirt imageio checksum
	// (ImageioChecksum).
	Sum func(length int64) BlockSum
	// OnProgress, when not nil, is called with the pass's Status (phase
	// verify, then done) every ProgressInterval (DefaultProgressInterval
	// when 0) while it runs, and once more at its end, from one goroutine
	// at a time, never after Compare or Checksum returned.
	OnProgress       func(Status)
	ProgressInterval time.Duration
}

// ReadReport is what Compare or Checksum did. Its JSON (MarshalJSON)
// adds milliseconds and bytes_per_second, as a Report's does.
type ReadReport struct {
	Src            string `json:"src"`
	Dst            string `json:"dst,omitempty"`
	SrcOffset      int64  `json:"src_offset"`
	DstOffset      int64  `json:"dst_offset"`
	Engine         string `json:"engine"`
	FallbackReason string `json:"fallback_reason"`
	// Bytes is the range's bytes, read or known to be holes.
	Bytes      int64   `json:"bytes"`
	BytesRead  int64   `json:"bytes_read"`
	Seconds    float64 `json:"-"`
	BlockSize  int     `json:"block_size"`
	QueueDepth int     `json:"queue_depth"`
	DirectSrc  bool    `json:"direct_src"`
	DirectDst  bool    `json:"direct_dst"`
	// Checksum is Src's block checksum (Checksum).
	Checksum *ChecksumResult `json:"checksum,omitempty"`
	// Request, when not 0, is the most one read moved: less than a block,
	// to fit IOLimits (a block is a whole number of 4 MiB cells).
	Request int `json:"request"`
	// IOLimits are the cgroup read limits on the disks read; the depth
	// and Request were fitted to them.
	IOLimits []IOLimit `json:"io_limits"`
	// Notes say what was decided and why, as a Plan's do.
	Notes []string `json:"-"`
}
