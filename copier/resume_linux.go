package copier

import (
	"fmt"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/internal/units"
)

// A resumable copy (Options.Resume) records in a state file
// (state_linux.go, its types in state.go) the prefix of the range that a
// completed fdatasync of DST covers, after
// every periodic barrier (Options.SyncEvery). Run again with the same
// SRC, DST and range, it checks that SRC and DST are the very ones the
// state describes (identity_linux.go), that the part recorded as copied
// is still what the earlier run wrote (resumecheck_linux.go), and copies
// only the rest.
//
// A new DST cannot be an unnamed inode then (a kill would lose it, and
// the work with it): it is copied under the visible name DST.ringcp-partial
// in DST's folder (partialName), flocked while a ringcp writes it, and
// renamed to DST only when complete, synced (and verified, when asked).
// Where a kind keeps the state is its own: a file's beside it
// (end_file_resume_linux.go); an end with no folder (an export) needs
// Options.StatePath and is resumed in place (resumeInPlace).

// checkResume holds a found state against SRC, DST, the range and the
// size policy, and settles where the copy starts. A fresh start needs
// nothing but the identities, for the state it will write.
func (p *Plan) checkResume() error {
	r := p.resume
	if r == nil {
		return nil
	}
	r.owns = p.truncate || r.newDst || (r.state != nil && r.state.Partial != "")
	var err error
	if r.src, err = p.src.identity(); err != nil {
		return err
	}
	if r.dst, err = p.dst.identity(); err != nil {
		return err
	}
	if r.state == nil {
		p.note("resume: no state at %s: the copy starts from the beginning and records its progress there", r.statePath)
		return nil
	}
	if err := p.sameCopy(); err != nil {
		return p.syncStartsOver(err)
	}
	st := r.state
	p.truncate = st.OwnsSize // cut where this run starts (Plan.cutAt), sized at the end
	r.from = resumePoint(st.Done, p.Length)
	if _, image := p.dst.end.(*imageDst); image {
		r.from = imagePoint(st.Done, p.Length) // image_resume_linux.go
	}
	p.note("resume: %s of %s copied and synced by an earlier run; copying the rest", units.Format(r.from), units.Format(p.Length))
	return nil
}

// sameCopy refuses a rerun whose SRC, DST, range or size policy is not
// the state's.
func (p *Plan) sameCopy() error {
	r, o := p.resume, &p.opts
	st, again := r.state, fmt.Sprintf("; remove %s to start over", r.statePath)
	if why := st.Src.differs(r.src); why != "" {
		return refuse(KindChanged, o.Src, "changed since the copy that the resume state records: "+why+again)
	}
	if why := st.Dst.differs(r.dst); why != "" {
		return refuse(KindChanged, p.dst.path, "is not the DST the resume state records: "+why+again)
	}
	rerun := fmt.Sprintf(": run it as the earlier run was (the same range and size options), or remove %s to start over", r.statePath)
	if key := o.imageKey(); st.Image != key {
		return refuse(KindChanged, "", fmt.Sprintf("the resume state %s records a copy that makes %s, this copy makes %s: run it with the earlier run's Options.DstFormat, Options.Qcow2.ClusterSize, Options.Qcow2.Compress, Options.Qcow2.Backing, Options.Qcow2.BackingFormat and Options.Qcow2.Preallocation, or remove %s and %s to start over",
			r.statePath, imageWhat(st.Image), imageWhat(key), r.statePath, p.dst.path))
	}
	if st.SrcOffset != o.SrcOffset || st.DstOffset != o.DstOffset || st.Length != p.Length {
		return refuse(KindChanged, "", fmt.Sprintf("the resume state %s records the range %d+%d to offset %d, this copy is %d+%d to %d%s",
			r.statePath, st.SrcOffset, st.Length, st.DstOffset, o.SrcOffset, p.Length, o.DstOffset, rerun))
	}
	if st.OwnsSize != r.owns {
		return refuse(KindChanged, "", fmt.Sprintf("the resume state %s records a copy that %s, this copy %s%s",
			r.statePath, sizePolicy(st.OwnsSize), sizePolicy(r.owns), rerun))
	}
	return nil
}

// imageWhat names what a resume state's Image key says a copy makes.
func imageWhat(key string) string {
	if key == "" {
		return "a raw DST"
	}
	return "a " + key + " image"
}

func sizePolicy(owns bool) string {
	if owns {
		return "gives DST the range's end as its size (a whole-file copy)"
	}
	return "keeps DST's size and what lies outside the range (Options.DstOffset or Options.Length given, or the keep size policy)"
}

// resumeInPlace sets up a resumable copy into a DST that has no folder to
// keep its state beside (an NBD export, what names it): its state needs
// a path of its own, and is loaded from there; DST is its own target,
// written in place.
func (p *Plan) resumeInPlace(what string) error {
	o := &p.opts
	if o.StatePath == "" {
		return refuse(KindBadInput, o.Dst, "a resumable copy to "+what+" needs a state file path (Options.StatePath)").on("StatePath")
	}
	r := &resumePlan{statePath: o.StatePath}
	var err error
	if r.state, err = loadState(r.statePath); err != nil {
		return err
	}
	p.resume = r
	return nil
}

// cutAt is where a copy that owns DST's size cuts it before writing: at
// the range's start, or where a resumed copy starts (what lies past that
// is copied again, and whatever wrote it).
func (p *Plan) cutAt() int64 {
	if p.resume == nil {
		return p.opts.DstOffset
	}
	return p.opts.DstOffset + p.resume.from
}

// resumePoint is where a rerun starts: the recorded prefix, down to a
// whole cell, which every alignment divides and where the verification
// and checksum grid lies; the whole range when it was done.
func resumePoint(done, length int64) int64 {
	if done >= length {
		return length
	}
	return align.RoundDown(max(done, 0), CellSize)
}
