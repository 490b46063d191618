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
	"github.com/ringcp/ringcp/internal/units"
	"golang.org/x/sys/unix"
)

// A resumable copy (Options.Resume) records in a state file (state.go)
// the prefix of the range that a completed fdatasync of DST covers, after
// every periodic barrier (Options.SyncEvery). Run again with the same
// SRC, DST and range, it checks that SRC and DST are the very ones the
// state describes, unchanged, and copies only the rest.
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
// DST that an earlier run began.
func (r *resumePlan) target(dst string) (string, error) {
	st := r.state
	if st == nil || st.Partial == "" {
		return dst, nil
	}
	if st.Partial != r.partial {
		return "", refuse(KindChanged, dst, fmt.Sprintf("the resume state %s is for a copy into %s: remove it, or give this copy its own Options.StatePath", r.statePath, st.Partial))
	}
	if _, err := os.Lstat(r.partial); err == nil {
		r.newDst = true
		return r.partial, nil
	}
	if _, err := os.Lstat(dst); err != nil {
		return "", refuse(KindChanged, dst, fmt.Sprintf("the resume state %s records a copy into %s, which is gone: remove the state to start over", r.statePath, r.partial))
	}
	// The partial file is gone and DST is there: the earlier run renamed
	// it when complete and was stopped before it removed the state. DST's
	// identity (checkResume) tells.
	return dst, nil
}

// checkResume holds a found state against SRC, DST and the range, and
// settles where the copy starts. A fresh start needs nothing.
func (p *Plan) checkResume() error {
	r, o := p.resume, &p.opts
	if r == nil {
		return nil
	}
	if r.state == nil {
		p.note("resume: no state at %s: the copy starts from the beginning and records its progress there", r.statePath)
		return nil
	}
	p.truncate = false // what was copied stays
	st, again := r.state, fmt.Sprintf("; remove %s to start over", r.statePath)
	if why := st.Src.differs(p.src.identity()); why != "" {
		return refuse(KindChanged, o.Src, "changed since the copy that the resume state records: "+why+again)
	}
	if why := st.Dst.differs(p.dst.identity()); why != "" {
		return refuse(KindChanged, p.dst.path, "is not the DST the resume state records: "+why+again)
	}
	if st.SrcOffset != o.SrcOffset || st.DstOffset != o.DstOffset || st.Length != p.Length {
		return refuse(KindChanged, "", fmt.Sprintf("the resume state %s records the range %d+%d to offset %d, this copy is %d+%d to %d%s",
			r.statePath, st.SrcOffset, st.Length, st.DstOffset, o.SrcOffset, p.Length, o.DstOffset, again))
	}
	r.from = resumePoint(st.Done, p.Length)
	p.note("resume: %s of %s copied and synced by an earlier run; copying the rest", units.Format(r.from), units.Format(p.Length))
	return nil
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
	f, err := createTemp(d.tmp, d.end.ep.path, flag&unix.O_ACCMODE)
	if err != nil {
		return err
	}
	d.f = f
	if d.direct {
		d.direct = setFlag(f, unix.O_DIRECT, true) == nil
	}
	if err := syncDirOf(d.tmp); err != nil {
		return err
	}
	return nil
}

// resumeDest takes the partial file an earlier run began as the new DST
// it still is, renamed to DST at the end. No other ringcp resumes it at
// the same time: lockEnds holds DST's flock (and QEMU's locks) on it.
func (p *Plan) resumeDest(d *dest) error {
	r := p.resume
	if r == nil || !r.newDst || !d.end.ep.exists {
		return nil
	}
	d.creation, d.tmp, d.keepIt = newPartial, r.partial, true
	return nil
}
