package copier

import (
	"fmt"
)

// Report is what a copy did. Its JSON (MarshalJSON) is the object the
// ringcp command prints with --json, less the command's envelope: bytes
// and milliseconds as integers, DstState as a word.
type Report struct {
	// Src is Options.Src as it may be shown: a URL without the password
	// of its userinfo or a presigned signature.
	Src       string `json:"src"`
	Dst       string `json:"dst"`
	SrcOffset int64  `json:"src_offset"`
	DstOffset int64  `json:"dst_offset"`
	// Length is the bytes in the range to copy (Plan.Length).
	Length         int64  `json:"length"`
	Engine         string `json:"engine"` // "io_uring", "pool", "nbd", or the offload
	FallbackReason string `json:"fallback_reason"`
	Bytes          int64  `json:"bytes"` // bytes written to DST as data
	BytesRead      int64  `json:"bytes_read"`
	BytesHoles     int64  `json:"bytes_holes"`  // not written: holes, or zeros left as holes
	BytesZeroed    int64  `json:"bytes_zeroed"` // made zero on DST (fallocate or writes of zeros)
	Offload        string `json:"offload"`      // "reflink" or "copy_file_range" when the filesystem copied
	// OffloadFallback says why an offload that was tried gave way to the
	// engine.
	OffloadFallback string `json:"offload_fallback"`
	// Seconds is the copy's wall time; CPUSeconds the user+system time of
	// this process over it, io_uring workers included. JSON has them as
	// milliseconds.
	Seconds    float64 `json:"-"`
	CPUSeconds float64 `json:"-"`
	BlockSize  int     `json:"block_size"`
	QueueDepth int     `json:"queue_depth"`
	DirectSrc  bool    `json:"direct_src"`
	DirectDst  bool    `json:"direct_dst"`
	Synced     bool    `json:"synced"`
	// FixedBuffers says whether the engine registered its buffers with
	// the kernel; EngineDetail is how it ran (the backend's words).
	FixedBuffers bool   `json:"fixed_buffers"`
	EngineDetail string `json:"engine_detail"`
	// Contiguous is how many bytes from the start of the copy reached DST
	// without a gap; DstState says what DST holds (after a failure too).
	Contiguous int64    `json:"contiguous"`
	DstState   DstState `json:"dst_state"`
	// MaxRate is the rate cap when the copy ended (Plan.SetMaxRate may
	// have changed Options.MaxRate meanwhile), in bytes per second; 0
	// for none.
	MaxRate int64 `json:"max_rate"`
	// IOPrio is the I/O priority the reads and writes had, "" for the
	// kernel's default; IOLimits the cgroup limits the copy was fitted to.
	IOPrio   string    `json:"ioprio"`
	IOLimits []IOLimit `json:"io_limits"`
	// Yield is what the yield controller did (Options.Yield), nil when
	// it did not run.
	Yield *YieldReport `json:"yield"`
	// Neighbour is what the good neighbour chose (neighbour.go): nil when
	// the queue depth was given, or in a batch.
	Neighbour *NeighbourReport `json:"neighbour"`
	// Notes are what Run decided or met that Plan.Notes could not say
	// yet: how a new DST was created, why an offload gave way, a side
	// that stayed buffered.
	Notes []string `json:"-"`
	// Verify is what the read-back verification found (Options.Verify).
	Verify *VerifyReport `json:"verify,omitempty"`
	// Checksum is SRC's imageio checksum over the range (Options.Checksum).
	Checksum *ChecksumResult `json:"checksum,omitempty"`
	// Resumed is how many bytes of the range an earlier run had copied
	// and this one did not copy again (Options.Resume). StatePath is the
	// state file; after a copy that did not complete it records the
	// first ResumeFrom bytes as done: the next run starts there.
	// PartialPath is the partial file a new DST is copied into until it
	// is complete, after such a copy.
	Resumed     int64  `json:"resumed,omitempty"`
	StatePath   string `json:"state_file,omitempty"`
	ResumeFrom  int64  `json:"resume_from,omitempty"`
	PartialPath string `json:"partial_file,omitempty"`
	// StateDropped is the state file of a resumable copy that was
	// removed because SRC changed while it was read: nothing it wrote is
	// a prefix a resume can build on (srcchanged_linux.go).
	StateDropped string `json:"-"`
	// Changed is what a sync or a copy restricted to ranges did
	// (Options.Sync, Extents, DirtyBitmap; changed.go); nil otherwise.
	Changed *SyncReport `json:"changed,omitempty"`
}

// Rate is the rate the cap governs, in bytes per second: the bytes read
// (each is written once) over the copy's time. 0 when no time passed.
func (r *Report) Rate() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.BytesRead) / r.Seconds
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// DstState says what a copy left in DST, so that a caller can tell the
// user exactly what is there after a failure or an interruption.
type DstState int

// What DST holds after Run.
const (
	// DstUntouched: DST was not opened for writing; it is as it was.
	DstUntouched DstState = iota
	// DstComplete: the copy is complete (and synced unless NoSync).
	DstComplete
	// DstDiscarded: DST was new and the copy did not complete, so it was
	// never given its name (or, where O_TMPFILE is missing, was removed):
	// nothing is left.
	DstDiscarded
	// DstPrefix: DST is a regular file cut to DstOffset+Contiguous bytes;
	// it holds exactly the first Report.Contiguous bytes of the copy.
	DstPrefix
	// DstPartial: DST (a block device, or a file written in a range) holds
	// the first Report.Contiguous bytes of the copy at DstOffset; the rest
	// of the range holds old data, new data, or a mix.
	DstPartial
	// DstUnknown: DST was written, but the fdatasync barrier after the
	// failure failed too (a write that had completed failed in
	// writeback): nothing DST holds can be vouched for.
	DstUnknown
	// DstChanging: the engine lost track of requests still in flight
	// (engine.ErrUndrained): DST holds the first Report.Contiguous bytes
	// of the copy, and the rest of the range may still change until the
	// process exits.
	DstChanging
	// DstResumable: a resumable copy (Options.Resume) stopped; DST (for a
	// new one, its partial file) holds the first Report.ResumeFrom bytes
	// of the copy, durable, and the state file records them: the same
	// copy run again continues from there.
	DstResumable
	// DstMismatch: the copy ran to its end, but reading DST back found it
	// different from SRC (a *MismatchError): do not use it.
	DstMismatch
	// DstMixed: SRC changed while it was read (a *SrcChangedError, or
	// found when the copy stopped or failed before its end): DST, an
	// existing one, holds a mix of SRC's old and new content, all of the
	// range or its first Report.Contiguous bytes. Do not use it.
	DstMixed
)

// String names the state for logs and JSON.
func (s DstState) String() string {
	switch s {
	case DstComplete:
		return "complete"
	case DstDiscarded:
		return "discarded"
	case DstPrefix:
		return "prefix"
	case DstPartial:
		return "partial"
	case DstUnknown:
		return "unknown"
	case DstChanging:
		return "changing"
	case DstResumable:
		return "resumable"
	case DstMismatch:
		return "mismatch"
	case DstMixed:
		return "mixed"
	}
	return "untouched"
}
