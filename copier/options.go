package copier

import (
	"fmt"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
)

// EngineChoice selects the backend.
type EngineChoice string

// Engines.
const (
	EngineAuto  EngineChoice = "auto"  // io_uring, the pool when it is unavailable
	EngineUring EngineChoice = "uring" // io_uring or fail
	EnginePool  EngineChoice = "pool"  // pread/pwrite goroutines
)

// DirectMode selects O_DIRECT.
type DirectMode string

// Direct modes.
const (
	DirectAuto   DirectMode = "auto"   // on each side that accepts it
	DirectAlways DirectMode = "always" // refuse when a side cannot
	DirectNever  DirectMode = "never"  // buffered on both sides
)

// Options describe one copy. The zero value of each field is its default.
type Options struct {
	Src, Dst   string
	SrcOffset  int64 // bytes into SRC where the copy starts
	DstOffset  int64 // bytes into DST where it lands
	Length     int64 // bytes to copy; 0 with LengthSet false: to SRC's end
	LengthSet  bool
	BlockSize  int // 0: chosen from both ends' geometry
	QueueDepth int // 0: chosen
	Engine     EngineChoice
	Direct     DirectMode
	NoSync     bool // skip the final fdatasync barrier
	// Progress, when not nil, counts completed reads and writes.
	Progress *engine.Progress
}

// Limits on what a user may ask for.
const (
	MaxBlockSize = 1 << 30 // one request moves at most this
)

func (o *Options) normalize() error {
	if o.Engine == "" {
		o.Engine = EngineAuto
	}
	if o.Direct == "" {
		o.Direct = DirectAuto
	}
	switch {
	case o.Src == "" || o.Dst == "":
		return refuse("", "SRC and DST must both be given")
	case o.Engine != EngineAuto && o.Engine != EngineUring && o.Engine != EnginePool:
		return refuse("", fmt.Sprintf("unknown engine %q (auto, uring or pool)", o.Engine))
	case o.Direct != DirectAuto && o.Direct != DirectAlways && o.Direct != DirectNever:
		return refuse("", fmt.Sprintf("unknown direct mode %q (auto, always or never)", o.Direct))
	case o.SrcOffset < 0 || o.DstOffset < 0 || o.Length < 0:
		return refuse("", "offsets and length must not be negative")
	case o.BlockSize < 0 || o.BlockSize > MaxBlockSize:
		return refuse("", fmt.Sprintf("block size %d out of range (1 B to 1 GiB)", o.BlockSize))
	case o.QueueDepth < 0 || o.QueueDepth > align.MaxQueueDepth:
		return refuse("", fmt.Sprintf("queue depth %d out of range (1 to %d)", o.QueueDepth, align.MaxQueueDepth))
	}
	return nil
}
