package copier

import (
	"fmt"

	"github.com/ringcp/ringcp/engine"
)

// Report is what a copy did.
type Report struct {
	Src, Dst       string
	Length         int64  // bytes in the range to copy (Plan.Length)
	Engine         string // "io_uring" or "pool"
	FallbackReason string
	Bytes          int64 // bytes written to DST as data
	BytesRead      int64
	BytesHoles     int64  // not written: holes, or zeros left as holes
	BytesZeroed    int64  // made zero on DST (fallocate or writes of zeros)
	Offload        string // "reflink" or "copy_file_range" when the filesystem copied
	// OffloadFallback says why an offload that was tried gave way to the
	// engine.
	OffloadFallback string
	Seconds         float64
	CPUSeconds      float64 // user+system of this process, io_uring workers included
	BlockSize       int
	QueueDepth      int
	DirectSrc       bool
	DirectDst       bool
	Synced          bool
	Caps            engine.Caps
	// Contiguous is how many bytes from the start of the copy reached DST
	// without a gap; DstState says what DST holds (after a failure too).
	Contiguous int64
	DstState   DstState
	// SyncReport: what a sync or a restricted copy did (changed.go).
	SyncReport
	// MaxRate is the rate cap when the copy ended (Plan.SetMaxRate may
	// have changed Options.MaxRate meanwhile), in bytes per second; 0
	// for none.
	MaxRate int64
	// IOPrio is the I/O priority the reads and writes had, "" for the
	// kernel's default; IOLimits the cgroup limits the copy was fitted to.
	IOPrio   string
	IOLimits []IOLimit
	// Yield is what the yield controller did (Options.Yield), nil when
	// it did not run.
	Yield *YieldReport
	// Notes are what Run decided or met that Plan.Notes could not say
	// yet: how a new DST was created, why an offload gave way, a side
	// that stayed buffered.
	Notes []string
	// Verify is what the read-back verification found (Options.Verify).
	Verify *VerifyReport
	// Checksum is SRC's imageio checksum over the range (Options.Checksum).
	Checksum *ChecksumResult
	// Resumed is how many bytes of the range an earlier run had copied
	// and this one did not copy again (Options.Resume). StatePath is the
	// state file; after a copy that did not complete it records the
	// first ResumeFrom bytes as done: the next run starts there.
	// PartialPath is the partial file a new DST is copied into until it
	// is complete, after such a copy.
	Resumed     int64
	StatePath   string
	ResumeFrom  int64
	PartialPath string
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
	}
	return "untouched"
}
