package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"syscall"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
	"golang.org/x/sys/unix"
)

// jsonSchema is the version of the --json format. Fields are added, never
// renamed or removed, and keep their meaning: that is no new schema. Only
// a change that breaks a reader would be, and the README would say so.
const jsonSchema = 1

// jsonReport is the --json object, printed once for every outcome of a
// copy: complete, refused (nothing written), failed or interrupted. Field
// names are a stable interface for integrations: add, never rename.
type jsonReport struct {
	Schema          int     `json:"schema"`
	Version         string  `json:"version"`
	Outcome         string  `json:"outcome"`   // complete, refused, failed, interrupted
	ExitCode        int     `json:"exit_code"` // the command's exit code
	Src             string  `json:"src"`
	Dst             string  `json:"dst"`
	SrcOffset       int64   `json:"src_offset"`
	DstOffset       int64   `json:"dst_offset"`
	Length          int64   `json:"length"` // bytes in the range (0 when refused before SRC was measured)
	Engine          string  `json:"engine"`
	FallbackReason  string  `json:"fallback_reason"`
	Bytes           int64   `json:"bytes"`
	BytesRead       int64   `json:"bytes_read"`
	Seconds         float64 `json:"seconds"`
	BytesPerSecond  float64 `json:"bytes_per_second"`
	CPUSeconds      float64 `json:"cpu_seconds"`
	BlockSize       int     `json:"block_size"`
	QueueDepth      int     `json:"queue_depth"`
	DirectSrc       bool    `json:"direct_src"`
	DirectDst       bool    `json:"direct_dst"`
	BytesHoles      int64   `json:"bytes_holes"`
	BytesZeroed     int64   `json:"bytes_zeroed"`
	Offload         string  `json:"offload"`
	OffloadFallback string  `json:"offload_fallback"`
	Synced          bool    `json:"synced"`
	DstState        string  `json:"dst_state"`
	Contiguous      int64   `json:"contiguous"`
	Error           string  `json:"error,omitempty"`
	Kind            string  `json:"kind,omitempty"`  // a refusal's kind (copier.Kind)
	Field           string  `json:"field,omitempty"` // the Options field at fault
	Flag            string  `json:"flag,omitempty"`  // the flag that sets it
	Errno           string  `json:"errno,omitempty"` // ENOSPC, EIO... when an errno is behind the error
	FixedBuffers    bool    `json:"fixed_buffers"`
	EngineDetail    string  `json:"engine_detail"`
	// With --verify, --checksum, --resume (trust_output.go).
	Verify     *jsonVerify            `json:"verify,omitempty"`
	Checksum   *copier.ChecksumResult `json:"checksum,omitempty"`
	Resumed    int64                  `json:"resumed,omitempty"`
	StateFile  string                 `json:"state_file,omitempty"`
	ResumeFrom int64                  `json:"resume_from,omitempty"`
	// Sharing a busy host (share.go, yield.go).
	MaxRate      int64         `json:"max_rate"` // the cap at the end, bytes/s; 0 for none
	AchievedRate float64       `json:"achieved_rate"`
	IOPrio       string        `json:"ioprio"`
	IOLimits     []jsonIOLimit `json:"io_limits"`
	Yield        *jsonYield    `json:"yield"`
	// A sync, or a copy restricted to ranges (synccmd.go).
	Changed *copier.SyncReport `json:"changed,omitempty"`
}

func toJSON(o copier.Options, r copier.Report, err error) jsonReport {
	j := jsonReport{
		Schema: jsonSchema, Version: moduleVersion(), Outcome: outcome(err), ExitCode: exitCode(err),
		Src: o.Src, Dst: o.Dst, SrcOffset: o.SrcOffset, DstOffset: o.DstOffset, Length: r.Length,
		Engine: r.Engine, FallbackReason: r.FallbackReason,
		Bytes: r.Bytes, BytesRead: r.BytesRead, Seconds: round(r.Seconds, 3), CPUSeconds: round(r.CPUSeconds, 3),
		BlockSize: r.BlockSize, QueueDepth: r.QueueDepth, DirectSrc: r.DirectSrc, DirectDst: r.DirectDst,
		BytesHoles: r.BytesHoles, BytesZeroed: r.BytesZeroed, Offload: r.Offload, OffloadFallback: r.OffloadFallback,
		Synced: r.Synced, DstState: r.DstState.String(), Contiguous: r.Contiguous, FixedBuffers: r.Caps.FixedBuffers, EngineDetail: r.Caps.Detail,
	}
	if r.Seconds > 0 {
		j.BytesPerSecond = math.Round(float64(r.Bytes) / r.Seconds)
	}
	if err != nil {
		j.Error, j.Errno = message(err), errnoOf(err)
	}
	var refused *copier.RefusedError
	if errors.As(err, &refused) {
		j.Kind, j.Field, j.Flag = string(refused.Kind), refused.Field, flagOf(refused.Field)
	}
	var usage *usageError
	if errors.As(err, &usage) {
		j.Kind = string(copier.KindBadInput)
	}
	addTrust(&j, r)
	j.MaxRate, j.AchievedRate, j.IOPrio, j.IOLimits = r.MaxRate, r.Rate(), r.IOPrio, ioLimitsJSON(r.IOLimits)
	j.Yield = yieldJSON(r.Yield)
	if o.Sync || o.ExtentsSet || o.DirtyBitmap != "" {
		j.Changed = &r.SyncReport
	}
	return j
}

// outcome names what happened, as exitCode decides it.
func outcome(err error) string {
	switch exitCode(err) {
	case exitOK:
		return "complete"
	case exitRefused:
		return "refused"
	case ExitFailed, exitMismatch:
		return "failed"
	}
	return "interrupted"
}

// errnoOf names the errno behind err, if there is one.
func errnoOf(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return ""
}

// round keeps digits decimals: a duration in ms is what a reader needs,
// and 0.30000000000000004 is noise.
func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// writeJSON prints the one --json object for a copy; err, when not nil,
// is why it did not complete.
func writeJSON(stdout io.Writer, o copier.Options, r copier.Report, err error) error {
	if werr := json.NewEncoder(stdout).Encode(toJSON(o, r, err)); werr != nil {
		return errors.Join(err, fmt.Errorf("writing JSON: %w", werr))
	}
	return err
}

// rangeDone is how much of the range the copy finished: data written,
// holes left and zeros made.
func rangeDone(r copier.Report) int64 { return r.Bytes + r.BytesHoles + r.BytesZeroed }

// printSummary is the one human line at the end.
func printSummary(w io.Writer, r copier.Report, verb string) {
	total := rangeDone(r)
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
