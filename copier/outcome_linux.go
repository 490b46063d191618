package copier

import "golang.org/x/sys/unix"

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

// stopped fills in what a failed or interrupted copy left in DST and
// returns err. A new DST that did not complete is discarded here.
func (p *Plan) stopped(rep *Report, d *dest, err error) error {
	rep.DstState = p.trustOutcome(p.discardOrDescribe(d, rep), d, err)
	return err
}

// discardOrDescribe removes a new DST that did not complete, and says what
// DST holds.
func (p *Plan) discardOrDescribe(d *dest, rep *Report) DstState {
	switch {
	case d.published:
		return DstComplete // complete and named: only its folder's fsync failed
	case d.fresh != newNone:
		if d.discard() {
			return DstDiscarded
		}
		return DstPartial
	case !rep.Synced && !p.opts.NoSync:
		return DstUnknown
	case p.truncate:
		// The engine cut the file to its contiguous prefix; trust that only
		// if the size says so (the cut itself can fail).
		var st unix.Stat_t
		if unix.Fstat(int(d.f.Fd()), &st) == nil && st.Size == p.opts.DstOffset+rep.Contiguous {
			return DstPrefix
		}
	}
	return DstPartial
}
