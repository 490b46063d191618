package copier

import (
	"fmt"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/extents"
)

// EngineChoice selects the backend.
type EngineChoice string

// Engines.
const (
	EngineAuto  EngineChoice = "auto"  // the most preferred backend that can run here (io_uring, else the pool)
	EngineUring EngineChoice = "uring" // io_uring or fail
	EnginePool  EngineChoice = "pool"  // pread/pwrite goroutines
)

// EngineChoice values are "auto" and the names in engine's registry of
// backends (EngineChoices); the two above are the ones ringcp has.

// DirectMode selects O_DIRECT.
type DirectMode string

// Direct modes.
const (
	DirectAuto   DirectMode = "auto"   // on each side that accepts it
	DirectAlways DirectMode = "always" // refuse when a side cannot
	DirectNever  DirectMode = "never"  // buffered on both sides
)

// SparseMode selects hole and zero handling.
type SparseMode string

// Sparse modes.
const (
	// SparseAuto: SRC's holes are not read, zero blocks are not written as
	// data; a file DST keeps them as holes, a device DST gets zeros by the
	// cheapest call (skipped with TargetIsZero). Zero detection is left
	// out only where it cannot pay: a device DST that has no WRITE_ZEROES,
	// where zeros cost as much as data.
	SparseAuto SparseMode = "auto"
	// SparseAlways: as auto, with zero detection everywhere.
	SparseAlways SparseMode = "always"
	// SparseNever: every byte is read and written as data.
	SparseNever SparseMode = "never"
)

// OffloadMode selects copy offload to the filesystem.
type OffloadMode string

// Offload modes.
const (
	// OffloadAuto: reflink (FICLONE) a whole file within a filesystem that
	// shares extents; copy_file_range within a network filesystem, where
	// the server copies; the engine everywhere else.
	OffloadAuto      OffloadMode = "auto"
	OffloadNever     OffloadMode = "never"
	OffloadReflink   OffloadMode = "reflink"    // FICLONE/FICLONERANGE or the engine
	OffloadCopyRange OffloadMode = "copy-range" // copy_file_range or the engine
)

// SizePolicy says what a copy does to the size of a regular-file DST. A
// block device has a fixed size and is never cut.
type SizePolicy string

// Size policies.
const (
	// SizeAuto: SizeTruncate when the copy starts DST (DstOffset 0) and
	// runs to SRC's end (no Length), as cp does; SizeKeep when it lands
	// inside DST. The ringcp command asks for SizeKeep whenever
	// --dst-offset or --length is given, even as 0.
	SizeAuto SizePolicy = "auto"
	// SizeTruncate cuts DST to DstOffset before the copy and gives it the
	// size DstOffset+Length after it, as cp does and as dd does without
	// conv=notrunc: DST's bytes before DstOffset are kept, nothing of it
	// is left past the copy.
	SizeTruncate SizePolicy = "truncate"
	// SizeKeep keeps DST's bytes outside the range: DST only grows, when
	// the copy ends past its end (dd conv=notrunc).
	SizeKeep SizePolicy = "keep"
)

// Image formats of Options.SrcFormat and Options.DstFormat. SrcFormat
// may also name a compression (xz, gzip, zstd, bzip2) that SRC must be.
const (
	FormatAuto  = "auto"
	FormatRaw   = "raw"
	FormatQcow2 = "qcow2"
	// FormatVmdk in Options.SrcFormat reads SRC as a sparse vmdk
	// (monolithicSparse or streamOptimized).
	FormatVmdk = "vmdk"
	// SrcFormatRaw in Options.SrcFormat says SRC's bytes are what to copy
	// even when they start like a disk image container or a compressed
	// stream; in Options.DstFormat, that raw bytes may overwrite a DST
	// that is an image.
	SrcFormatRaw = FormatRaw
)

// DefaultZeroBlock is the zero detection granularity: a filesystem block.
const DefaultZeroBlock = 4096

// Options describe one copy. The zero value of each field is its default.
type Options struct {
	Src, Dst   string
	SrcOffset  int64 // bytes into SRC where the copy starts
	DstOffset  int64 // bytes into DST where it lands
	Length     int64 // bytes to copy; 0 with LengthSet false: to SRC's end
	LengthSet  bool
	DstSize    SizePolicy // a regular-file DST's size; "" is SizeAuto
	BlockSize  int        // 0: chosen from both ends' geometry
	QueueDepth int        // 0: chosen
	Engine     EngineChoice
	Direct     DirectMode
	NoSync     bool // skip the final fdatasync barrier
	Sparse     SparseMode
	ZeroBlock  int // zero detection granularity; 0: DefaultZeroBlock
	// TargetIsZero vouches that DST reads as zeros where the copy goes (a
	// fresh thin LV, a new device): zero ranges are then skipped, not
	// written.
	TargetIsZero bool
	Offload      OffloadMode
	// Force writes a DST that is in use (held by device-mapper or md, open
	// exclusively by another program, behind a loop device), creates a new
	// file on devtmpfs, and tries a copy its filesystem seems to lack room
	// for. It never allows writing over a mounted file system or swap.
	Force bool
	// SrcFormat is what SRC's bytes are: FormatAuto ("") reads a qcow2
	// image's or a sparse vmdk's (monolithicSparse, streamOptimized)
	// guest bytes and refuses other containers (vmdk descriptors,
	// vhdx...), FormatRaw copies the bytes as they are, FormatQcow2 and
	// FormatVmdk refuse anything but such an image. An image SRC's
	// offsets and length are of its guest's bytes.
	SrcFormat string
	// DstFormat is what DST is made as: "" or FormatRaw writes the bytes
	// as they are (FormatRaw given also lets them overwrite an existing
	// DST that is a disk image, refused otherwise), FormatQcow2 creates
	// a new qcow2 image (Qcow2 says how) whose guest reads them, or
	// writes them into an existing qcow2 image as its guest's bytes
	// (qemu-img convert -n: the image keeps its options and backing
	// file; a whole copy needs its virtual size to be SRC's).
	DstFormat string
	// Qcow2 is how a qcow2 DST is made.
	Qcow2 Qcow2Options
	// MaxRate, when positive, caps the bytes of the range moved per
	// second (read, then written once; holes that are never read and
	// fallocate zeroing do not count); the read passes after the copy
	// (Verify's read-back, a resumed Checksum's read of SRC) run under it
	// too. Plan.SetMaxRate changes it while the copy runs. See share.go.
	MaxRate int64
	// IOPrio is the I/O priority of the copy's reads and writes: "idle",
	// "be", "be:0".."be:7", "rt", "rt:0".."rt:7" (engine.ParseIOPrio);
	// "" leaves it to the kernel.
	IOPrio string
	// Yield gives the disk to other work: while others wait on it, the
	// copy cuts its depth and rate, and raises them again when they no
	// longer do (yield.go).
	Yield bool
	// Progress, when not nil, counts completed reads and writes as the
	// copy goes; Prepare makes one otherwise. Plan.Status reads it.
	Progress *engine.Progress
	// Verify reads DST back after the barrier and compares it with what
	// was read from SRC (trust.go); a difference is a *MismatchError.
	Verify bool
	// Checksum, when not nil, makes a block checksum of SRC's range from
	// the data the copy reads (Report.Checksum): it is called once with
	// the range's length, and what it returns is given every 4 MiB block
	// of the range (BlockSum). For the oVirt imageio checksum, give
	// ImageioChecksum (as the ringcp command does for --checksum).
	Checksum func(length int64) BlockSum
	// Resume keeps a state file of the part of the copy known durable,
	// and continues from it when one is there (resume_linux.go).
	Resume bool
	// StatePath is the resume state file; "" puts it next to DST
	// (DST.ringcp-state). A block device or NBD export DST needs one.
	StatePath string
	// ResumeProve compares the part of the copy an earlier run made with
	// SRC before a resumed copy writes, even where DST's marks show
	// nothing wrote it since: SRC's identity is then not taken on its
	// word. A web SRC's is its server's validator, and a server whose
	// ETag is its file's mtime and size (nginx, Apache) names another
	// file of the same size and mtime the same. A difference refuses the
	// copy (KindChanged), before anything is written.
	ResumeProve bool
	// SyncEvery is how often a resumable copy makes what it wrote
	// durable and records it; 0 is DefaultSyncEvery.
	SyncEvery time.Duration
	// OnProgress, when not nil, is called with the copy's Status every
	// ProgressInterval (DefaultProgressInterval when 0) while Run runs,
	// and once more when the copy has ended (PhaseDone, 100%, when it
	// completed), before Run returns. Calls come from one goroutine at a
	// time, never after Run returned; a slow OnProgress delays the next
	// call, never the copy.
	OnProgress       func(Status)
	ProgressInterval time.Duration
	// NBD tunes the ends that are NBD URIs (end_nbd_options.go).
	NBD NBDOptions
	// Web tunes the SRCs that are http(s):// URLs and s3:// objects;
	// Stream the ones read in order ("-", a pipe, compressed data).
	Web    WebOptions
	Stream StreamOptions
	// ExpectChecksum, "ALGO:HEX" (sha256, sha512, md5), is the digest of
	// SRC's bytes as published (before decompression): a copy whose SRC
	// read otherwise fails with an error matching
	// *expectsum.MismatchError, and a new DST is discarded.
	ExpectChecksum string
	// SrcSize, when positive, announces SRC's size where SRC does not say
	// it before its end (a stream, gzip data): the copy is then a range
	// like any other, and fails if SRC ends elsewhere. A SRC that says
	// its size must say this one.
	SrcSize int64
	// Only what changed (changed.go, changed_linux.go): Extents and
	// DirtyBitmap copy only some ranges of SRC (at the same offsets in
	// DST, whose other bytes are kept); Sync copies only the granules
	// where DST differs from SRC.
	//
	// Extents, with ExtentsSet, are the only ranges copied: offsets in
	// SRC and, the same, in DST (extents.Parse's entries, so that a
	// range past an end is refused by its line). Overlapping and
	// unsorted ranges merge; an empty list copies nothing. DST must
	// exist. Ranges are widened to whole O_DIRECT units of both ends
	// (512 or 4096 bytes) where they are not aligned: those few bytes
	// around a range are copied from SRC too.
	Extents    []extents.Entry
	ExtentsSet bool
	// DirtyBitmap, on an NBD SRC, copies only the extents its dirty
	// bitmap marks dirty (the qemu:dirty-bitmap:NAME meta context, as
	// qemu-nbd -B NAME and qemu-storage-daemon offer it); within Extents
	// when both are set. A server that does not offer it is a refusal
	// that names it.
	DirtyBitmap string
	// Sync makes DST equal to SRC by writing only the granules that
	// differ: both ends are read through the engine (SRC and DST of each
	// chunk into one slot), compared per SyncGranule, and only differing
	// granules written; granules that are zeros in SRC are made zero in
	// DST as a copy makes zero runs (punched where DST can). A regular
	// file DST gets SRC's size; a device DST keeps its own and must hold
	// SRC. A DST that does not exist yet is simply copied. The copy is
	// in place: a sync that fails or is stopped leaves DST a mix of old
	// and new granules (Report.DstState DstPartial), never complete: run
	// it again.
	Sync bool
	// SyncGranule is the unit compared and written (DefaultSyncGranule
	// when 0): a power of two from 4 KiB to 64 KiB, so a changed 4 KiB
	// costs at most one granule; raised to the ends' O_DIRECT unit.
	SyncGranule int
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
	if o.Sparse == "" {
		o.Sparse = SparseAuto
	}
	if o.Offload == "" {
		o.Offload = OffloadAuto
	}
	if o.DstSize == "" {
		o.DstSize = SizeAuto
	}
	if o.ZeroBlock == 0 {
		o.ZeroBlock = DefaultZeroBlock
	}
	if o.SrcFormat == "" {
		o.SrcFormat = FormatAuto
	}
	if o.Progress == nil {
		o.Progress = &engine.Progress{}
	}
	if err := o.checkChoices(); err != nil {
		return err
	}
	return o.checkValues()
}

// checkValues refuses values no copy can take, naming the field.
func (o *Options) checkValues() error {
	bad := func(field, reason string) error { return refuse(KindBadInput, "", reason).on(field) }
	switch {
	case o.Src == "":
		return bad("Src", "SRC and DST must both be given")
	case o.Dst == "":
		return bad("Dst", "SRC and DST must both be given")
	case !hasKind(o.Src) || !hasKind(o.Dst):
		return bad(map[bool]string{true: "Src", false: "Dst"}[!hasKind(o.Src)],
			"streams are not supported: SRC and DST are files or block devices (use ./- for a file named -)")
	case o.DstFormat != "" && o.DstFormat != FormatRaw && o.DstFormat != FormatQcow2:
		return bad("DstFormat", fmt.Sprintf("unknown destination format %q: ringcp writes raw and qcow2 (Options.DstFormat raw writes raw bytes over an existing image file; convert to others with qemu-img convert -O FORMAT)", o.DstFormat))
	case o.ZeroBlock < 0 || o.ZeroBlock > MaxBlockSize || o.ZeroBlock&(o.ZeroBlock-1) != 0:
		return bad("ZeroBlock", fmt.Sprintf("Options.ZeroBlock %d: must be a power of two up to 1 GiB", o.ZeroBlock))
	case o.SrcOffset < 0:
		return bad("SrcOffset", fmt.Sprintf("Options.SrcOffset %d: must not be negative", o.SrcOffset))
	case o.DstOffset < 0:
		return bad("DstOffset", fmt.Sprintf("Options.DstOffset %d: must not be negative", o.DstOffset))
	case o.Length < 0:
		return bad("Length", fmt.Sprintf("Options.Length %d: must not be negative", o.Length))
	case o.BlockSize < 0 || o.BlockSize > MaxBlockSize:
		return bad("BlockSize", fmt.Sprintf("Options.BlockSize %d: out of range (1 B to 1 GiB)", o.BlockSize))
	case o.QueueDepth < 0 || o.QueueDepth > align.MaxQueueDepth:
		return bad("QueueDepth", fmt.Sprintf("Options.QueueDepth %d: out of range (1 to %d)", o.QueueDepth, align.MaxQueueDepth))
	case o.NBD.Connections < 0 || o.NBD.Connections > MaxNBDConnections:
		return bad("NBD.Connections", fmt.Sprintf("Options.NBD.Connections %d: out of range (1 to %d)", o.NBD.Connections, MaxNBDConnections))
	case o.NBD.Timeout < 0:
		return bad("NBD.Timeout", fmt.Sprintf("Options.NBD.Timeout %v: must not be negative", o.NBD.Timeout))
	case o.MaxRate < 0:
		return bad("MaxRate", fmt.Sprintf("Options.MaxRate %d: must not be negative", o.MaxRate))
	case o.SyncEvery < 0:
		return bad("SyncEvery", fmt.Sprintf("Options.SyncEvery %v: must not be negative", o.SyncEvery))
	case !o.Resume && o.StatePath != "":
		return bad("StatePath", "Options.StatePath is for Options.Resume: give it too")
	case !o.Resume && o.SyncEvery != 0:
		return bad("SyncEvery", "Options.SyncEvery is for Options.Resume: give it too")
	}
	if _, err := engine.ParseIOPrio(o.IOPrio); err != nil {
		return bad("IOPrio", "Options.IOPrio: "+err.Error())
	}
	if err := o.checkWeb(); err != nil {
		return err
	}
	return o.checkQcow2()
}
