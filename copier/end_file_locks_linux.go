package copier

import (
	"errors"
	"fmt"
	"os"

	"github.com/ringcp/ringcp/guard"
)

// Locks: ringcp takes, for the whole copy, the locks that QEMU and flock(1)
// users honour, and refuses an end that someone else holds (issue 9 §3: two
// ringcps, or ringcp and a VM, wrote one image and both said "complete").
//
// Prepare tests (checkSrcLocks, checkDstLocks), changing nothing; Run
// takes the locks (fileEnd.lock, lockDst) before anything is truncated or
// written, tests again, and drops them when it returns
// (heldLocks.release). guard has the protocol
// (guard/lock_linux.go) and names the holders; what --force lifts, and the
// words, are decided here.

// forceNeverLocks ends a refusal on a lock.
const forceNeverLocks = "Options.Force does not override a lock"

// heldLocks are descriptors whose locks ringcp holds: closing them drops
// the locks.
type heldLocks []*os.File

// checkSrcLocks is Prepare's test of SRC: it refuses a SRC that is held
// for writing (unless Options.Force), testing through a read-only
// descriptor. Run takes the lock and tests again (lock).
func (f *fileEnd) checkSrcLocks(p *Plan) error {
	file, err := f.openForLock()
	if err != nil {
		return refuseLockOpen(f.ep.path, err)
	}
	defer file.Close()
	c, err := guard.CheckSrc(file)
	if err != nil {
		return f.noLocks(p, err)
	}
	if err := f.srcHeld(p, file, c); err != nil {
		return err
	}
	if err := f.checkNodes(p.srcRange(), guard.CheckSrc, func(file *os.File, c *guard.Conflict) error { return f.srcHeld(p, file, c) }); err != nil {
		return err
	}
	p.note("locks: SRC shared, as QEMU's readers lock it (OFD read locks on bytes 100, 201, 203): nothing that honours QEMU's locks can write or resize it until the copy ends")
	return nil
}

// checkDstLocks is Prepare's test of DST: it refuses one that another
// program holds locked (never overridden). A new DST has nothing to test.
// Run takes the locks and tests again (lockDst).
func (f *fileEnd) checkDstLocks(p *Plan) error {
	if !f.ep.exists {
		p.note("locks: none on the new DST: nobody can open it before it is complete (an unnamed inode, or a hidden name held with flock)")
		return nil
	}
	file, err := f.openForLock()
	if err != nil {
		return refuseLockOpen(f.ep.path, err)
	}
	defer file.Close()
	c, err := guard.CheckDst(file)
	if err != nil {
		return f.noLocks(p, err)
	}
	if err := f.dstHeld(file, c); err != nil {
		return err
	}
	if err := f.checkNodes(p.dstRange(), guard.CheckDst, func(file *os.File, c *guard.Conflict) error { return f.dstHeld(file, c) }); err != nil {
		return err
	}
	p.note("locks: DST exclusive (flock LOCK_EX; OFD read locks on QEMU's bytes 101-103 and 200-204): no VM, qemu-nbd, qemu-img, flock user or other ringcp can use it until the copy ends")
	return nil
}

// checkNodes tests the locks of the other nodes that reach the same bytes
// (guard.LockNodes: the disk of a partition, a loop device's backing file,
// the device's /dev node...) as check does on the end's own; held gives
// the verdict. A node that cannot be opened or has no locks is passed
// over: the end's own test already spoke for the filesystem.
func (f *fileEnd) checkNodes(r byteRange, check func(*os.File) (*guard.Conflict, error),
	held func(*os.File, *guard.Conflict) error) error {
	for _, node := range guard.LockNodes(f.span(r)) {
		file, err := os.OpenFile(node, inspectFlags, 0)
		if err != nil {
			continue
		}
		c, err := check(file)
		if err == nil {
			err = held(file, c)
		}
		file.Close()
		var refused *RefusedError
		if errors.As(err, &refused) {
			return err
		}
	}
	return nil
}

// srcHeld refuses a SRC that c shows someone writes, unless Force.
func (f *fileEnd) srcHeld(p *Plan, file *os.File, c *guard.Conflict) error {
	why, err := f.srcWriter(p, file, c)
	if why == "" || err != nil {
		return err
	}
	if p.Forced != "" {
		p.Forced += "; "
	}
	p.Forced += why
	p.note("Options.Force: copying although %s: the copy may not be consistent", why)
	return nil
}

// srcWriter says who c shows writes SRC, and refuses that unless Force.
func (f *fileEnd) srcWriter(p *Plan, file *os.File, c *guard.Conflict, own ...*os.File) (string, error) {
	if c == nil {
		return "", nil
	}
	names, _ := c.Holders(file, own...)
	if names == "" {
		names = "another process"
	}
	why := "SRC is open for writing by " + names
	if !p.opts.Force {
		return why, refuse(KindLocked, f.ep.path, why+": a copy would not be consistent; Options.Force copies anyway").on("Src")
	}
	return why, nil
}

// dstHeld refuses a DST someone else holds locked; Force does not lift it:
// the holder said, with the lock, that it uses DST.
func (f *fileEnd) dstHeld(file *os.File, c *guard.Conflict, own ...*os.File) error {
	if c == nil {
		return nil
	}
	names, n := c.Holders(file, own...)
	switch {
	case n == 0:
		names = "another process (the kernel does not say which) holds"
	case n == 1:
		names += " holds"
	default:
		names += " hold"
	}
	return refuse(KindLocked, f.ep.path, fmt.Sprintf("in use: %s %s on it; %s", names, c.What, forceNeverLocks)).on("Dst")
}

// noLocks lets a copy go on without locks where the file system has none,
// and says so; any other error refuses.
func (f *fileEnd) noLocks(p *Plan, err error) error {
	if guard.LockUnsupported(err) {
		p.note("locks: none on %s: %v", f.ep.path, err)
		return nil
	}
	return refuseErr(KindCheckFailed, f.ep.path, "cannot test its locks", err)
}

func refuseLockOpen(path string, err error) error {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return err
	}
	return refuseErr(KindCheckFailed, path, "cannot test its locks", err)
}

// lock is Run's step on SRC before DST is changed: it takes SRC's locks on
// the copy's own SRC descriptor and refuses if someone took theirs since
// Prepare. When SRC and DST are one file, DST's locks cover both. What Run
// learns goes to rep.
func (f *fileEnd) lock(p *Plan, h *held, rep *Report) error {
	if same, _ := f.same(p.dst); same {
		return nil
	}
	c, err := guard.LockSrc(h.f)
	if err != nil {
		if !guard.LockUnsupported(err) {
			return &os.PathError{Op: "lock", Path: f.ep.path, Err: err}
		}
		rep.note("locks: none on %s: %v", f.ep.path, err)
	}
	why, err := f.srcWriter(p, h.f, c, h.f)
	if err != nil {
		return err
	}
	if why != "" {
		rep.note("Options.Force: copying although %s: the copy may not be consistent", why)
	}
	return nil
}

// lockDst is Run's step on an existing DST before it is changed: it takes
// DST's locks on a read-only descriptor of its own, returned to be closed
// when the copy ends (which drops them), and refuses if someone took
// theirs since Prepare. A new DST needs none: an unnamed inode cannot be
// opened by anyone else, and a temporary file is flocked when created
// (end_file_new_linux.go).
func (f *fileEnd) lockDst(rep *Report) (heldLocks, error) {
	if !f.ep.exists {
		return nil, nil
	}
	file, err := f.openForLock()
	if err != nil {
		return nil, err
	}
	held := heldLocks{file}
	c, err := guard.LockDst(file)
	switch {
	case guard.LockUnsupported(err):
		rep.note("locks: none on %s: %v", f.ep.path, err)
		return held, nil
	case err != nil:
		held.release()
		return nil, &os.PathError{Op: "lock", Path: f.ep.path, Err: err}
	}
	if err := f.dstHeld(file, c, file); err != nil {
		held.release()
		return nil, err
	}
	return held, nil
}

// release drops the locks by closing their descriptors; SRC's go with the
// copy's SRC descriptor.
func (h heldLocks) release() {
	for _, f := range h {
		f.Close()
	}
}

// openForLock opens the end read-only to test or hold locks, checked to
// be the object Prepare inspected.
func (f *fileEnd) openForLock() (*os.File, error) {
	file, err := os.OpenFile(f.ep.path, inspectFlags, 0)
	if err != nil {
		return nil, err
	}
	if err := f.checkSame(file); err != nil {
		file.Close()
		return nil, err
	}
	return file, nil
}
