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
// Prepare tests (checkLocks), changing nothing; Run takes the locks
// (lockEnds) before anything is truncated or written, tests again, and
// drops them when it returns (heldLocks.release). guard has the protocol
// (guard/lock_linux.go) and names the holders; what --force lifts, and the
// words, are decided here.

// forceNeverLocks ends a refusal on a lock.
const forceNeverLocks = "Options.Force does not override a lock"

// heldLocks are descriptors whose locks ringcp holds: closing them drops
// the locks.
type heldLocks []*os.File

// checkLocks is Prepare's step: it refuses a DST that another program
// holds locked (never overridden) and a SRC that is held for writing
// (unless Options.Force), testing through read-only descriptors. A new DST
// has nothing to test. Run takes the locks and tests again (lockEnds).
func (p *Plan) checkLocks() error {
	if p.src.local() {
		if err := p.checkSrcLocks(); err != nil {
			return err
		}
	}
	if p.dst.exists && p.dst.local() {
		if err := p.checkDstLocks(); err != nil {
			return err
		}
	}
	if p.src.local() {
		p.note("locks: SRC shared, as QEMU's readers lock it (OFD read locks on bytes 100, 201, 203): nothing that honours QEMU's locks can write or resize it until the copy ends")
	}
	switch {
	case !p.dst.local():
		p.note("locks: DST is an NBD export: its server holds the locks on what it serves (qemu-nbd takes QEMU's)")
		return nil
	case !p.dst.exists:
		p.note("locks: none on the new DST: nobody can open it before it is complete (an unnamed inode, or a hidden name held with flock)")
		return nil
	}
	p.note("locks: DST exclusive (flock LOCK_EX; OFD read locks on QEMU's bytes 101-103 and 200-204): no VM, qemu-nbd, qemu-img, flock user or other ringcp can use it until the copy ends")
	return nil
}

func (p *Plan) checkSrcLocks() error {
	f, err := openForLock(p.src.path, &p.src)
	if err != nil {
		return refuseLockOpen(p.src.path, err)
	}
	defer f.Close()
	c, err := guard.CheckSrc(f)
	if err != nil {
		return p.noLocks(p.src.path, err)
	}
	if err := p.srcHeld(f, c); err != nil {
		return err
	}
	return p.checkNodes(p.srcSpan(), guard.CheckSrc, p.srcHeld)
}

func (p *Plan) checkDstLocks() error {
	f, err := openForLock(p.dst.path, &p.dst)
	if err != nil {
		return refuseLockOpen(p.dst.path, err)
	}
	defer f.Close()
	c, err := guard.CheckDst(f)
	if err != nil {
		return p.noLocks(p.dst.path, err)
	}
	if err := p.dstHeld(f, c); err != nil {
		return err
	}
	return p.checkNodes(p.dstSpan(), guard.CheckDst, p.dstHeld)
}

// checkNodes tests the locks of the other nodes that reach the same bytes
// (guard.LockNodes: the disk of a partition, a loop device's backing file,
// the device's /dev node...) as check does on the endpoint's own; held
// gives the verdict. A node that cannot be opened or has no locks is
// passed over: its own endpoint's test already spoke for the filesystem.
func (p *Plan) checkNodes(s guard.Span, check func(*os.File) (*guard.Conflict, error),
	held func(*os.File, *guard.Conflict, ...*os.File) error) error {
	for _, node := range guard.LockNodes(s) {
		f, err := openForLock(node, nil)
		if err != nil {
			continue
		}
		c, err := check(f)
		if err == nil {
			err = held(f, c)
		}
		f.Close()
		var refused *RefusedError
		if errors.As(err, &refused) {
			return err
		}
	}
	return nil
}

// srcHeld refuses a SRC that c shows someone writes, unless Force.
func (p *Plan) srcHeld(f *os.File, c *guard.Conflict, own ...*os.File) error {
	why, err := p.srcWriter(f, c, own...)
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
func (p *Plan) srcWriter(f *os.File, c *guard.Conflict, own ...*os.File) (string, error) {
	if c == nil {
		return "", nil
	}
	names, _ := c.Holders(f, own...)
	if names == "" {
		names = "another process"
	}
	why := "SRC is open for writing by " + names
	if !p.opts.Force {
		return why, refuse(KindLocked, p.src.path, why+": a copy would not be consistent; Options.Force copies anyway").on("Src")
	}
	return why, nil
}

// dstHeld refuses a DST someone else holds locked; Force does not lift it:
// the holder said, with the lock, that it uses DST.
func (p *Plan) dstHeld(f *os.File, c *guard.Conflict, own ...*os.File) error {
	if c == nil {
		return nil
	}
	names, n := c.Holders(f, own...)
	switch {
	case n == 0:
		names = "another process (the kernel does not say which) holds"
	case n == 1:
		names += " holds"
	default:
		names += " hold"
	}
	return refuse(KindLocked, p.dst.path, fmt.Sprintf("in use: %s %s on it; %s", names, c.What, forceNeverLocks)).on("Dst")
}

// noLocks lets a copy go on without locks where the file system has none,
// and says so; any other error refuses.
func (p *Plan) noLocks(path string, err error) error {
	if guard.LockUnsupported(err) {
		p.note("locks: none on %s: %v", path, err)
		return nil
	}
	return refuseErr(KindCheckFailed, path, "cannot test its locks", err)
}

func refuseLockOpen(path string, err error) error {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return err
	}
	return refuseErr(KindCheckFailed, path, "cannot test its locks", err)
}

// lockEnds is Run's step before DST is changed: it takes SRC's locks on
// the copy's own SRC descriptor src, and an existing DST's on a read-only
// descriptor of its own, returned to be closed when the copy ends (which
// drops them), and refuses if someone took theirs since Prepare. When SRC
// and DST are one file, DST's locks cover both. A new DST needs none: an
// unnamed inode cannot be opened by anyone else, and a temporary file is
// flocked when created (newfile_linux.go). What Run learns goes to rep.
func (p *Plan) lockEnds(src *os.File, rep *Report) (heldLocks, error) {
	if p.src.local() && !sameObject(&p.src, &p.dst) {
		c, err := guard.LockSrc(src)
		if err != nil {
			if !guard.LockUnsupported(err) {
				return nil, &os.PathError{Op: "lock", Path: p.src.path, Err: err}
			}
			rep.note("locks: none on %s: %v", p.src.path, err)
		}
		why, err := p.srcWriter(src, c, src)
		if err != nil {
			return nil, err
		}
		if why != "" {
			rep.note("Options.Force: copying although %s: the copy may not be consistent", why)
		}
	}
	if !p.dst.exists || !p.dst.local() {
		return nil, nil
	}
	f, err := openForLock(p.dst.path, &p.dst)
	if err != nil {
		return nil, err
	}
	held := heldLocks{f}
	c, err := guard.LockDst(f)
	switch {
	case guard.LockUnsupported(err):
		rep.note("locks: none on %s: %v", p.dst.path, err)
		return held, nil
	case err != nil:
		held.release()
		return nil, &os.PathError{Op: "lock", Path: p.dst.path, Err: err}
	}
	if err := p.dstHeld(f, c, f); err != nil {
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

// openForLock opens path read-only to test or hold locks, and checks it
// is the object Prepare inspected when ep is given.
func openForLock(path string, ep *endpoint) (*os.File, error) {
	f, err := os.OpenFile(path, inspectFlags, 0)
	if err != nil {
		return nil, err
	}
	if ep != nil {
		if err := checkSame(f, ep); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}
