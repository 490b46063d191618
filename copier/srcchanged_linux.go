package copier

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ringcp/ringcp/internal/sysblock"
)

// A file that something writes while the copy reads it gives a DST that
// is neither its old content nor its new one: what was read before the
// write is old, what was read after is new, and a write behind the read
// position is lost. dd and cp say nothing of it; tar says "file changed
// as we read it". ringcp fails the copy: when it ends, before it says
// it is complete and before a new DST gets its name, each file it read
// (SRC, a loop device SRC's backing file, the files of an image SRC's
// chain) must still have the identity it had when opened, marks
// included: its size, mtime and ctime (identity_linux.go, as a resume
// state records them).
//
// Reading changes none of them: ringcp's own reads, fadvise, its OFD
// and QEMU-style locks (fcntl, no inode change), another reader's
// (QEMU, qemu-img, cat); atime is not compared. A block device other
// than a loop device keeps no marks: nothing tells that something wrote
// it, and it is not checked (one mounted read-write is refused). A loop
// device whose backing file has no path to read its marks from (removed
// after losetup, as `losetup -f img; rm img` leaves it, or a block
// device) is held to its own counts of sectors written and discarded
// (/sys/class/block/NAME/stat): they see every write through the device,
// not one to the backing file by another way. A
// filesystem with coarse stamps (NFS with whole seconds, ext3) misses a
// write within the same tick as the open: the marks are compared equal
// or not, no more is claimed.

// srcFile is a file the copy reads, as it was when opened.
type srcFile struct {
	f    fder
	was  identity
	what string // names it in the error: "SRC /a.img"
	// writes, when not "", are a loop device's counts of sectors
	// written and discarded when opened: its backing file's marks could
	// not be read.
	writes string
}

// fder is an open file: an *os.File, or a transport that wraps one.
type fder interface{ Fd() uintptr }

// watchSrc records f, opened at path, size bytes (a block device's), as
// it is now. A block device that is no loop device keeps no marks and
// is not watched (nil).
func watchSrc(f fder, path string, size int64, what string) (*srcFile, error) {
	id, err := identityOf(f, path, size, true)
	if err != nil {
		return nil, err
	}
	if id.Kind == kindBlock && id.Loop == nil {
		return nil, nil // a disk: no marks to compare (see above)
	}
	w := &srcFile{f: f, was: id, what: what}
	if id.Kind == kindBlock && id.Marks == nil {
		// identityOf fsync'ed the device: the count includes what
		// another opener had left in its page cache.
		w.writes = devWrites(id.Rdev)
	}
	return w, nil
}

// devWrites is the block device rdev's count of sectors written and
// discarded (fields 7 and 14 of its sysfs stat), or "" where sysfs does
// not say. Not the requests: the flush of ringcp's own fsync counts as a
// write request of no sectors.
func devWrites(rdev uint64) string {
	d, err := sysblock.Lookup(rdev)
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(d.Dir, "stat"))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 14 {
		return ""
	}
	return f[6] + " " + f[13]
}

// changed says, as a *SrcChangedError, how the file changed since it
// was opened; nil when it did not.
func (w *srcFile) changed() error {
	if w == nil {
		return nil
	}
	now, err := identityOf(w.f, w.was.Path, w.was.Size, true)
	if err != nil {
		return fmt.Errorf("%s: cannot tell whether it changed while it was read: %w", w.what, err)
	}
	why := w.was.differs(now)
	if why == "" && w.writes != "" && devWrites(w.was.Rdev) != w.writes {
		// Its backing file has no marks to name: the device is named.
		return &SrcChangedError{Path: w.was.Path, What: w.what, Why: "it was written through the device (its write counters moved; its backing file's marks cannot be read)"}
	}
	if why == "" {
		return nil
	}
	e := &SrcChangedError{Path: w.was.Path, What: w.what, Why: why}
	if l := w.was.Loop; l != nil {
		// What a loop device shows changed with its backing file.
		e.Path, e.What = l.File, fmt.Sprintf("%s's backing file %s", w.what, l.File)
	}
	return e
}

// unchangedAll checks every file in ws that is watched (not nil), and
// says how the first that changed did.
func unchangedAll(ws ...*srcFile) func() error {
	return func() error {
		for _, w := range ws {
			if err := w.changed(); err != nil {
				return err
			}
		}
		return nil
	}
}

// srcUnchanged fails the copy when a file the end read changed while
// it was read (see above); nil for an end that watches none.
func (h *held) srcUnchanged() error {
	if h == nil || h.unchanged == nil {
		return nil
	}
	return h.unchanged()
}

// srcUnchanged is the check of a's SRC at the end of the copy, unless
// the copy's own writes (or a batch neighbour's) reach a file it reads
// in other bytes (one file, distinct ranges; a loop device over it):
// then its marks change with them, cannot tell another writer's, and
// the report says it was not checked.
func (p *Plan) srcUnchanged(a *acquired, rep *Report) error {
	if p.ownWrites != "" {
		rep.note("SRC is not checked for writes while it was read: %s, whose writes change its marks", p.ownWrites)
		return nil
	}
	return a.src.srcUnchanged()
}

// mixedIn marks err, a *SrcChangedError, as having left its mix in an
// existing DST: the state is DstMixed.
func mixedIn(err error) bool {
	var sc *SrcChangedError
	if !errors.As(err, &sc) {
		return false
	}
	sc.Mixed = true
	return true
}

// changedUnder is what a copy stopped or failed before its end (err)
// left in an existing DST, state, once SRC is checked too: the part it
// kept (DstPrefix, DstPartial) is the first bytes of neither SRC's old
// nor its new content when SRC changed while it was read, and is then
// DstMixed, the change noted. Other states stay, as does one whose
// copy's own writes change SRC's marks.
func (p *Plan) changedUnder(a *acquired, rep *Report, state DstState, err error) DstState {
	var sc *SrcChangedError
	if state != DstPrefix && state != DstPartial || errors.As(err, &sc) {
		return state
	}
	if sc = p.changedSrc(a, err); sc == nil {
		return state
	}
	sc.Mixed = true
	rep.note("%v", sc)
	return DstMixed
}

// changedSrc is err's *SrcChangedError, or, for a copy that failed or
// stopped for another reason, how SRC changed while it was read, found
// now; nil when it did not, or when the copy's own writes change its
// marks.
func (p *Plan) changedSrc(a *acquired, err error) *SrcChangedError {
	var sc *SrcChangedError
	switch {
	case errors.As(err, &sc):
		return sc
	case err == nil || p.ownWrites != "":
		return nil
	case errors.As(a.src.srcUnchanged(), &sc):
		return sc
	}
	return nil
}

// dropResume ends a resumable copy whose SRC changed while it was read
// (sc): what it wrote mixes SRC's old and new content, no prefix a
// resume can build on, and a kept state would have the next run refuse
// it (SRC no longer matches) after this one said to run it again. The
// state goes, and a new DST's partial file with it (keep(false): left
// discards it, as any failed copy's new DST); an existing DST is said
// to be mixed. The same command run again then starts over, which is
// what the copy needs: from a snapshot, or once nothing writes SRC.
func (p *Plan) dropResume(a *acquired, rep *Report, sc *SrcChangedError) {
	a.dst.keep(false)
	path := p.resume.statePath
	if err := removeState(path); err != nil {
		rep.StatePath = path // still there: the next run refuses it, and says to remove it
		rep.note("%v", err)
		return
	}
	rep.StateDropped = path
	rep.note("resume: %s changed while it was read: the resume state %s was removed; run again, the copy starts over", sc.What, path)
}

// unchanged fails a read pass (Checksum, Compare, PrepareEach's) whose
// ends changed while it read them; of names what it made of them.
func (r *readRun) unchanged(of string) error {
	for _, h := range []*held{r.src, r.dst} {
		if err := h.srcUnchanged(); err != nil {
			var sc *SrcChangedError
			if errors.As(err, &sc) {
				sc.Of = of
			}
			return err
		}
	}
	return nil
}
