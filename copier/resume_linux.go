package copier

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/internal/safedir"
	"github.com/ringcp/ringcp/internal/units"
	"golang.org/x/sys/unix"
)

// A resumable copy (Options.Resume) records in a state file (state_linux.go, its types in state.go)
// the prefix of the range that a completed fdatasync of DST covers, after
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

// partialName is the visible name a new DST is copied under:
// "NAME.ringcp-partial" beside it, or with a hash of NAME where that would
// be too long for a file name.
func partialName(path string) string {
	dir, base := filepath.Split(path)
	name := base + ".ringcp-partial"
	if len(name) > 255 {
		h := fnv.New64a()
		h.Write([]byte(base))
		name = base[:200] + "." + strconv.FormatUint(h.Sum64(), 16) + ".ringcp-partial"
	}
	return filepath.Join(dir, name)
}

// inspectTarget inspects a file or device DST, or for a resumed copy to
// a new DST, the partial file it is being copied into.
func (p *Plan) inspectTarget() (*endpoint, error) {
	o := &p.opts
	if !o.Resume {
		return inspectDest(o.Dst)
	}
	r := &resumePlan{statePath: o.StatePath, partial: partialName(o.Dst)}
	if r.statePath == "" {
		r.statePath = StatePath(o.Dst)
	}
	p.resume = r
	var err error
	if r.state, err = loadState(r.statePath); err != nil {
		return nil, err
	}
	target, err := r.target(o.Dst)
	if err != nil {
		return nil, err
	}
	if r.state != nil {
		waitReleased(target, releasePatience)
	}
	ep, err := inspectDest(target)
	if err != nil {
		return ep, err
	}
	f := ep.end.(*fileEnd)
	f.label = o.Dst
	if f.isBlock && o.StatePath == "" {
		return ep, refuse(KindBadInput, o.Dst, "a resumable copy to a block device needs a state file path (Options.StatePath): beside the device, in /dev, it would not survive a reboot")
	}
	if !ep.exists {
		r.newDst, f.creation, f.creationWhy = true, newPartial, "a resumable copy needs a name a kill cannot lose"
	}
	return ep, nil
}

// checkResumed refuses a file DST shorter than what the resume state
// records as copied.
func (f *fileEnd) checkResumed(p *Plan) error {
	r, o := p.resume, &p.opts
	if r == nil || r.state == nil || f.isBlock || f.st.Size >= o.DstOffset+r.from {
		return nil
	}
	return refuse(KindChanged, f.ep.path, fmt.Sprintf("holds %d bytes, less than the %d the resume state records as copied; remove %s to start over", f.st.Size, o.DstOffset+r.from, r.statePath))
}

// target is the path the copy writes: DST, or the partial file of a new
// DST that an earlier run began. Names are compared with their folders
// resolved: k2.img and /abs/k2.img are one DST.
func (r *resumePlan) target(dst string) (string, error) {
	st := r.state
	if st == nil || st.Partial == "" {
		return dst, nil
	}
	if st.Partial != newFileKey(r.partial) {
		return "", refuse(KindChanged, dst, fmt.Sprintf("the resume state %s records a copy into %s, not into this DST: give this copy a state file of its own (Options.StatePath), or run the copy the state records", r.statePath, st.Partial))
	}
	_, partialErr := os.Lstat(r.partial)
	_, dstErr := os.Lstat(dst)
	switch {
	case partialErr == nil && dstErr == nil:
		return "", refuse(KindChanged, dst, fmt.Sprintf("exists now, but the resume state %s records a new DST being copied into %s: a DST that appeared meanwhile is never replaced; move it away to finish the copy, or remove %s and the state to keep it", r.statePath, r.partial, r.partial))
	case partialErr == nil:
		// Only a partial file of this user's own is resumed: one another
		// user put there (or a symlink) would get SRC's bytes.
		if err := safedir.LstatOwn(r.partial); err != nil {
			return "", refuse(KindPermission, dst, err.Error()+"; it is not resumed: remove it and "+r.statePath+" to start over")
		}
		r.newDst = true
		return r.partial, nil
	case dstErr != nil:
		return "", refuse(KindChanged, dst, fmt.Sprintf("the resume state %s records a copy into %s, which is gone: remove the state to start over", r.statePath, r.partial))
	}
	// The partial file is gone and DST is there: the earlier run renamed
	// it when complete and was stopped before it removed the state. DST's
	// identity (checkResume) tells.
	return dst, nil
}

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
		return err
	}
	st := r.state
	p.truncate = st.OwnsSize // cut where this run starts (Plan.cutAt), sized at the end
	r.from = resumePoint(st.Done, p.Length)
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

// releasePatience is how long a resumed copy waits for a killed ringcp
// to let go of DST.
const releasePatience = 5 * time.Second

// waitReleased gives a ringcp that was just killed time to let go of
// DST: io_uring tears a dead process's ring down after the process is
// gone, and the files registered with it are closed only then
// (milliseconds; longer while its I/O completes), so a file's flock and
// a block device's exclusive claim outlive the process a little. A live
// holder is still there after patience, and the checks that follow name
// it.
func waitReleased(path string, patience time.Duration) {
	deadline := time.Now().Add(patience)
	for !released(path) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// released: nothing holds path's flock, or a block device's exclusive
// claim (a mounted device is claimed too: the checks refuse it then).
func released(path string) bool {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return true
	}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		f, err := os.OpenFile(path, os.O_RDONLY|os.O_EXCL|unix.O_CLOEXEC, 0)
		if err == nil {
			f.Close()
		}
		return !errors.Is(err, unix.EBUSY)
	}
	f, err := os.OpenFile(path, inspectFlags, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}
	return !errors.Is(err, unix.EWOULDBLOCK)
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

// createPartial creates a new DST under its visible partial name, locked,
// and makes the name durable: a state will soon point at it.
func (d *dest) createPartial(p *Plan, flag int) error {
	d.tmp = p.resume.partial
	f, err := createTemp(d.dir, d.tmp, d.end.ep.path, flag&unix.O_ACCMODE)
	if err != nil {
		return err
	}
	d.f = f
	if d.direct {
		d.direct = setFlag(f, unix.O_DIRECT, true) == nil
	}
	return syncDir(d.dir.File())
}

// openPartial opens the partial file an earlier run began as the new DST
// it still is, renamed to DST at the end: through a descriptor of its
// folder, never through a symlink. No other ringcp resumes it at the same
// time: lockEnds holds DST's flock (and QEMU's locks) on it.
func (d *dest) openPartial(p *Plan, flag int) error {
	r := p.resume
	dir, err := safedir.Open(dirOf(r.partial))
	if err != nil {
		return err
	}
	d.dir, d.creation, d.tmp, d.keepIt = dir, newPartial, r.partial, true
	d.f, err = dir.OpenOwn(filepath.Base(r.partial), d.end.ep.path, flag)
	var owner *safedir.OwnerError
	if errors.As(err, &owner) {
		return refuse(KindPermission, p.opts.Dst, "the partial file "+owner.Error()+"; it is not resumed").on("Dst")
	}
	return err
}
