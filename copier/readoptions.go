package copier

import "github.com/ringcp/ringcp/engine"

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
	// length (see Options.Checksum).
	Sum func(length int64) BlockSum
}

// ReadReport is what Compare or Checksum did.
type ReadReport struct {
	Src, Dst       string
	Engine         string
	FallbackReason string
	Bytes          int64 // of the range, read or known to be holes
	BytesRead      int64
	Seconds        float64
	BlockSize      int
	QueueDepth     int
	DirectSrc      bool
	DirectDst      bool
	// Checksum is Src's block checksum (Checksum).
	Checksum *ChecksumResult
	// Request, when not 0, is the most one read moved: less than a block,
	// to fit IOLimits (a block is a whole number of 4 MiB cells).
	Request int
	// IOLimits are the cgroup read limits on the disks read; the depth
	// and Request were fitted to them.
	IOLimits []IOLimit
	// Notes say what was decided and why, as a Plan's do.
	Notes []string
}
