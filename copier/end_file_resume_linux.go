package copier

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ringcp/ringcp/internal/safedir"
	"golang.org/x/sys/unix"
)

// A resumable copy into a file or device keeps its state beside DST
// (StatePath), and a new DST is copied under a visible partial name
// (partialName) that a kill cannot lose, renamed to DST when complete
// (resume_linux.go says what a resumed copy checks).

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
func inspectTarget(p *Plan) (*endpoint, error) {
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
	// A qcow2 DST's file holds the guest's bytes compressed, or not at
	// all where they are zeros: its length says nothing of the prefix
	// (its check reads the image, image_resume_linux.go).
	if r == nil || r.state == nil || f.isBlock || o.DstFormat == FormatQcow2 || f.st.Size >= o.DstOffset+r.from {
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

// createPartial creates a new DST under its visible partial name, locked,
// and makes the name durable: a state will soon point at it.
func (d *dest) createPartial(p *Plan, flag int) error {
	d.tmp = p.resume.partial
	f, err := createTemp(d.dir, d.tmp, d.end.ep.path, flag&unix.O_ACCMODE, newFileMode(p))
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
