package copier

import (
	"fmt"
	"time"

	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/internal/units"
)

// Verification, checksums and restartable copies (Options.Verify,
// Checksum, Resume) are built on the engine's Observer: what the copy
// reads is digested as it goes, so SRC is never read twice, and each
// barrier's durable prefix is recorded.
//
// Both digests work on one grid of cells, imageio's 4 MiB blocks counted
// from the range start: the engine keeps every chunk inside one cell
// (Job.Grid) and rounds holes inward to it, so a cell is read in one
// piece, by the copy and by the read-back alike, or is a hole.

// CellSize is the grid of verification digests and checksum blocks (the
// oVirt imageio checksum's block size); a verification counts bad blocks
// of this size.
const CellSize = 4 << 20

// BlockSum is a checksum computed block by block (CellSize blocks from the
// range start) from a copy's data as it is read (Options.Checksum) or
// from a read pass (Checksum). Blocks come in any order, each once, as
// data or as zeros; package blkhash's Hasher is one (the imageio
// checksum), wrapped to return a ChecksumResult.
type BlockSum interface {
	// Data is the range's bytes from off, a multiple of CellSize: whole
	// blocks, or up to the range's end. data is valid during the call.
	Data(off int64, data []byte)
	// Zero says [off, off+n) holds only zeros: whole blocks, or up to the
	// range's end.
	Zero(off, n int64)
	// Sum waits for what was given and returns the checksum.
	Sum() (ChecksumResult, error)
	// Close abandons the checksum.
	Close()
}

// ChecksumResult is a block checksum as imageio's API returns it:
// {"algorithm": "blake2b", "block_size": 4194304, "checksum": "<hex>"}.
type ChecksumResult struct {
	Algorithm string `json:"algorithm"`
	BlockSize int    `json:"block_size"`
	Checksum  string `json:"checksum"`
}

// DefaultSyncEvery is how often a resumable copy makes what it wrote
// durable: a kill loses about this much work. Each barrier is an
// fdatasync of DST while the writes go on.
const DefaultSyncEvery = 2 * time.Second

// VerifyReport is what the read-back verification found.
type VerifyReport struct {
	Bytes   int64 // bytes of the range checked
	Seconds float64
	// BadBlocks counts the CellSize blocks of the range that differ.
	BadBlocks int64
	// FirstBad is the offset in DST of the first byte that differs, or
	// -1 when none does.
	FirstBad int64
	// How says how DST was read: with O_DIRECT, or buffered after its
	// cached pages were dropped.
	How string
	// SrcZerosRead: bytes of an NBD SRC that its block status called
	// zeros, which the copy did not read, read after the copy to check
	// them (a server whose map is wrong would otherwise pass).
	SrcZerosRead int64
}

// MismatchError is a verification that found DST different from SRC: a
// copy's read-back (Options.Verify) or a Compare. The ringcp command
// exits 3 on it.
type MismatchError struct {
	Path      string // DST
	Offset    int64  // of the first differing byte, in DST
	RangeOff  int64  // the same, from the start of the range
	BadBlocks int64  // CellSize blocks of the range that differ
	Blocks    int64  // CellSize blocks in the range
	// Src and SrcOffset name SRC and the first differing byte in it, for
	// a Compare ("" for a copy's read-back).
	Src       string
	SrcOffset int64
	// Detail says more, when there is more to say (SRC reads differently
	// now than during the copy, one end is shorter).
	Detail string
}

func (e *MismatchError) Error() string {
	where := fmt.Sprintf("%s differs from SRC at offset %d (%d bytes into the copy)", e.Path, e.Offset, e.RangeOff)
	if e.Src != "" {
		where = fmt.Sprintf("%s and %s differ at offset %d of SRC (offset %d of DST)", e.Src, e.Path, e.SrcOffset, e.Offset)
	}
	msg := fmt.Sprintf("verify: %s: %d of %d blocks of %s differ", where, e.BadBlocks, e.Blocks, units.Format(CellSize))
	if e.Detail != "" {
		msg += "; " + e.Detail
	}
	return msg
}

// cells is how many CellSize cells a range of n bytes has.
func cells(n int64) int64 { return (n + CellSize - 1) / CellSize }

// chooseTrust settles what verification, checksums and resuming need:
// barriers; an alignment that divides the 4 MiB cells of their grid (to
// which decideSizes rounds the block size). chooseOffload has kept the
// data in the engine.
func (p *Plan) chooseTrust() error {
	o := &p.opts
	if !o.Verify && o.Checksum == nil && !o.Resume {
		return nil
	}
	if o.NoSync && (o.Verify || o.Resume) {
		return refuse(KindBadInput, "", "verification and resuming need the fdatasync barrier: they cannot run with no sync")
	}
	if !o.Verify && o.Checksum == nil {
		return nil
	}
	for _, ep := range []*endpoint{p.src, p.dst} {
		if a := int64(ep.alignment()); CellSize%a != 0 {
			return refuse(KindNotSupported, ep.path, fmt.Sprintf("its alignment %d does not divide the %d-byte blocks verification and checksums use", a, CellSize))
		}
	}
	return nil
}

// needsData: verification, checksums, resuming and an expected digest
// need every byte to pass through the engine.
func (o *Options) needsData() bool {
	return o.Verify || o.Checksum != nil || o.Resume || o.ExpectChecksum != ""
}

// shifted passes a copy's observations on with their offsets moved from
// the job's range to the plan's: a resumed copy's job starts part-way.
type shifted struct {
	by   int64
	next []engine.Observer
}

func (s *shifted) Data(rel int64, data []byte) {
	for _, o := range s.next {
		o.Data(s.by+rel, data)
	}
}

func (s *shifted) Hole(rel, n int64) {
	for _, o := range s.next {
		o.Hole(s.by+rel, n)
	}
}

func (s *shifted) Durable(n int64) {
	for _, o := range s.next {
		o.Durable(s.by + n)
	}
}
