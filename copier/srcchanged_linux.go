package copier

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
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
// device whose backing file's marks cannot be compared is held to the
// counts of sectors written through the loop devices over it
// (srcloops_linux.go). A filesystem with coarse stamps (NFS with whole
// seconds, ext3) misses a write within the same tick as the open: the
// marks are compared equal or not, no more is claimed.

// srcFile is a file the copy reads, as it was when opened.
type srcFile struct {
	f    fder
	was  identity
	what string // names it in the error: "SRC /a.img"
	// loops, when not nil, are a loop device SRC's counts of sectors
	// written, and those of the other loop devices over its backing,
	// when opened: what is compared when its backing file's marks
	// cannot be (srcloops_linux.go).
	loops map[uint64]loopCount
	// node is the mtime of a block device SRC's node when opened
	// (nodeMtime).
	node int64
	// backing is a loop device SRC's backing file, opened (O_PATH) when
	// its path named it at the open: where the path no longer does
	// (removed or renamed during the copy), its size and mtime are read
	// through this (backingChanged).
	backing *os.File
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
	if id.Loop != nil {
		// identityOf fsync'ed the device: the count includes what
		// another opener had left in its page cache. Taken even when
		// the backing file's marks were read: it may be removed before
		// the end.
		w.loops = loopWrites(id)
		w.node = nodeMtime(f)
		if id.Marks != nil {
			w.backing = openBacking(id.Loop)
		}
	}
	return w, nil
}

// changed says, as a *SrcChangedError, how the file changed since it
// was opened; nil when it did not. limit says what was not checked.
func (w *srcFile) changed(c srcCheck) (limit string, err error) {
	if w == nil {
		return "", nil
	}
	own := c.own
	now, err := identityFlushed(w.f, w.was.Path, w.was.Size, true, !c.stopped)
	if err != nil {
		return "", fmt.Errorf("%s: cannot tell whether it changed while it was read: %w", w.what, err)
	}
	byMarks := w.loops == nil || w.was.Marks != nil && now.Marks != nil
	switch {
	case own != nil && byMarks:
		return own.why + ", whose writes change its marks", nil
	case own.passes(w.was.Rdev):
		return own.why + ", whose writes go through SRC's device", nil
	case byMarks:
		if err := w.changedAs(w.was.differs(now)); err != nil {
			return "", err
		}
		return "", w.nodeChanged()
	}
	// Its backing file's marks cannot be compared: the loop devices'
	// counts are.
	was := w.was
	was.Marks = nil
	if why := was.differs(now); why != "" {
		return "", w.changedAs(why)
	}
	if why := w.loopsChanged(own); why != "" {
		// Its backing file has no marks to name: the device is named.
		return "", &SrcChangedError{Path: w.was.Path, What: w.what, Why: why}
	}
	if own == nil {
		// What no loop device counts: a write by a program that holds
		// the file open.
		if why := w.backingChanged(); why != "" {
			return "", w.changedAs(why)
		}
	}
	return "", w.nodeChanged()
}

// changedAs is the error of a change why ("" none), naming what a loop
// device shows changed with its backing file.
func (w *srcFile) changedAs(why string) error {
	if why == "" {
		return nil
	}
	e := &SrcChangedError{Path: w.was.Path, What: w.what, Why: why}
	if l := w.was.Loop; l != nil {
		e.Path, e.What = l.File, fmt.Sprintf("%s's backing file %s", w.what, l.File)
	}
	return e
}

// unchangedAll checks every file in ws that is watched (not nil), and
// says how the first that changed did, or what was not checked.
func unchangedAll(ws ...*srcFile) func(srcCheck) (string, error) {
	return func(c srcCheck) (string, error) {
		var limits []string
		for _, w := range ws {
			limit, err := w.changed(c)
			if err != nil {
				return "", err
			}
			if limit != "" && !slices.Contains(limits, limit) {
				limits = append(limits, limit)
			}
		}
		return strings.Join(limits, "; "), nil
	}
}

// srcUnchanged fails the copy when a file the end read changed while
// it was read (see above); nil for an end that watches none.
func (h *held) srcUnchanged(c srcCheck) (limit string, err error) {
	if h == nil || h.unchanged == nil {
		return "", nil
	}
	return h.unchanged(c)
}

// selfWrites are the copy's own writes (or a batch neighbour's) that
// reach a file SRC reads in other bytes (one file, distinct ranges; a
// loop device over it); nil when none do.
func (p *Plan) selfWrites() *selfWrites {
	if p.ownWrites == "" {
		return nil
	}
	return &selfWrites{why: p.ownWrites, through: p.ownThrough}
}

// srcUnchanged is the check of a's SRC at the end of the copy. Where
// the copy's own writes change what it compares (selfWrites), that is
// not compared, and the report says what was not checked.
func (p *Plan) srcUnchanged(a *acquired, rep *Report) error {
	limit, err := a.src.srcUnchanged(srcCheck{own: p.selfWrites()})
	if limit != "" {
		rep.note("SRC is not checked for writes while it was read: %s", limit)
	}
	return err
}

// srcChangedIn is err's *SrcChangedError, or nil.
func srcChangedIn(err error) *SrcChangedError {
	var sc *SrcChangedError
	if errors.As(err, &sc) {
		return sc
	}
	return nil
}

// changedUnder is what a copy stopped or failed before its end (err)
// left in an existing DST, state, once SRC is checked too: the part it
// kept (DstPrefix, DstPartial) is the first bytes of neither SRC's old
// nor its new content when SRC changed while it was read, and is then
// DstMixed, the change noted. Other states stay, as does one whose
// copy's own writes change what SRC's check compares, and one that
// keeps no byte of SRC: a prefix of none (the file cut to DstOffset), or
// a range the copy wrote nothing to. Zero bytes mix nothing.
func (p *Plan) changedUnder(a *acquired, rep *Report, state DstState, err error) DstState {
	if state != DstPrefix && state != DstPartial || srcChangedIn(err) != nil {
		return state
	}
	if rep.Contiguous == 0 && (state == DstPrefix || rep.Bytes == 0) {
		return state
	}
	sc := p.changedSrc(a, err)
	if sc == nil {
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
	if sc := srcChangedIn(err); sc != nil || err == nil {
		return sc
	}
	_, cerr := a.src.srcUnchanged(srcCheck{own: p.selfWrites(), stopped: true})
	return srcChangedIn(cerr)
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
		if _, err := h.srcUnchanged(srcCheck{}); err != nil {
			if sc := srcChangedIn(err); sc != nil {
				sc.Of = of
			}
			return err
		}
	}
	return nil
}

// openBacking opens the loop backing l's file by its path, O_PATH (no
// read, no write: its marks only), when the path still names it; nil
// otherwise. It stays open as long as the loop device holds the file,
// and is closed with the *os.File.
func openBacking(l *loopBacking) *os.File {
	fd, err := unix.Open(l.File, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Dev != l.Dev || st.Ino != l.Ino {
		unix.Close(fd)
		return nil
	}
	return os.NewFile(uintptr(fd), l.File)
}

// backingChanged says how a loop SRC's backing file, whose path no
// longer names it, was written since the open ("" not, or not known):
// its size and mtime, read through the descriptor openBacking kept. A
// program that held the file open writes it without any loop device,
// and no count of sectors moves. Its ctime is not compared: the unlink
// or rename that took its path moved it.
func (w *srcFile) backingChanged() string {
	if w.backing == nil || w.was.Marks == nil {
		return ""
	}
	now, _ := marksAt(int(w.backing.Fd()), "", unix.AT_EMPTY_PATH)
	if now == nil {
		return ""
	}
	was := *w.was.Marks
	was.Ctime = now.Ctime
	if why := was.differs(*now); why != "" {
		return why + ", after its path was removed or renamed"
	}
	return ""
}

// close closes what w opened of its own (a loop SRC's backing file).
func (w *srcFile) close() {
	if w != nil && w.backing != nil {
		w.backing.Close()
	}
}
