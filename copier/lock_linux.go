package copier

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Locks: ringcp takes, for the whole copy, the locks that QEMU and flock(1)
// users honour, and refuses an end that someone else holds (issue 9 §3: two
// ringcps, or ringcp and a VM, wrote one image and both said "complete").
//
// Prepare tests (checkLocks), changing nothing; Run takes the locks
// (lockEnds, lockNewDest) before anything is truncated or written, tests
// again, and drops them when it returns (unlock). lockqemu_linux.go has
// the protocol, lockholder_linux.go names the holders.

// heldLocks are descriptors whose locks ringcp holds: closing them drops
// the locks.
type heldLocks []*os.File

// checkLocks is Prepare's step: it refuses a DST that another program
// holds locked (never overridden) and a SRC that is held for writing
// (unless Options.Force), testing through read-only descriptors. A new DST
// has nothing to test. Run takes the locks and tests again (lockEnds).
func (p *Plan) checkLocks() error {
	if err := p.checkSrcLocks(); err != nil {
		return err
	}
	if p.dst.exists {
		if err := p.checkDstLocks(); err != nil {
			return err
		}
	}
	p.note("locks: SRC shared, as QEMU's readers lock it (OFD read locks on bytes 100, 201, 203): nothing that honours QEMU's locks can write or resize it until the copy ends")
	what := "DST"
	if !p.dst.exists {
		what = "DST's new inode, from its creation,"
	}
	p.note("locks: %s exclusive (flock LOCK_EX; OFD read locks on QEMU's bytes 101-103 and 200-204): no VM, qemu-nbd, qemu-img, flock user or other ringcp can use it until the copy ends", what)
	return nil
}

func (p *Plan) checkSrcLocks() error {
	f, err := openForLock(p.src.path, &p.src)
	if err != nil {
		return refuseLockOpen(p.src.path, err)
	}
	defer f.Close()
	c, err := testQemu(f, srcTest)
	if err != nil {
		return p.noLocks(p.src.path, err)
	}
	return p.srcHeld(f, c)
}

func (p *Plan) checkDstLocks() error {
	f, err := openForLock(p.dst.path, &p.dst)
	if err != nil {
		return refuseLockOpen(p.dst.path, err)
	}
	defer f.Close()
	c, err := probeDst(f)
	if err != nil {
		return p.noLocks(p.dst.path, err)
	}
	return p.dstHeld(f, c)
}

// srcHeld refuses a SRC that c shows someone writes, unless Force.
func (p *Plan) srcHeld(f *os.File, c *lockConflict, own ...*os.File) error {
	if c == nil {
		return nil
	}
	names, _ := holders(f, c, own...)
	if names == "" {
		names = "another process"
	}
	why := "SRC is open for writing by " + names
	if !p.opts.Force {
		return refuse(p.src.path, why+": a copy would not be consistent; --force copies anyway")
	}
	if p.Forced != "" {
		p.Forced += "; "
	}
	p.Forced += why
	p.note("--force: copying although %s: the copy may not be consistent", why)
	return nil
}

// dstHeld refuses a DST someone else holds locked; Force does not lift it:
// the holder said, with the lock, that it uses DST.
func (p *Plan) dstHeld(f *os.File, c *lockConflict, own ...*os.File) error {
	if c == nil {
		return nil
	}
	names, n := holders(f, c, own...)
	switch {
	case n == 0:
		names = "another process (the kernel does not say which) holds"
	case n == 1:
		names += " holds"
	default:
		names += " hold"
	}
	return refuse(p.dst.path, fmt.Sprintf("in use: %s %s on it; %s", names, c.what, forceNeverLocks))
}

// noLocks lets a copy go on without locks where the file system has none,
// and says so; any other error refuses.
func (p *Plan) noLocks(path string, err error) error {
	if lockUnsupported(err) {
		p.note("locks: none on %s: %v", path, err)
		return nil
	}
	return refuseErr(path, "cannot test its locks", err)
}

func refuseLockOpen(path string, err error) error {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return err
	}
	return refuseErr(path, "cannot test its locks", err)
}

// lockEnds is Run's step before DST is opened for writing: it takes SRC's
// locks on the copy's own SRC descriptor src, and an existing DST's on a
// read-only descriptor of its own that stays open until Run returns
// (unlock), and refuses if someone took theirs since Prepare. When SRC and
// DST are one file, DST's locks cover both.
func (p *Plan) lockEnds(src *os.File) error {
	if !sameObject(&p.src, &p.dst) {
		c, err := lockSrc(src)
		if err != nil {
			if !lockUnsupported(err) {
				return &os.PathError{Op: "lock", Path: p.src.path, Err: err}
			}
			p.note("locks: none on %s: %v", p.src.path, err)
		}
		if c != nil && !p.opts.Force {
			return p.srcHeld(src, c, src)
		}
	}
	if !p.dst.exists {
		return nil
	}
	f, err := openForLock(p.dst.path, &p.dst)
	if err != nil {
		return err
	}
	p.held = append(p.held, f)
	return p.holdDst(f)
}

// lockNewDest locks the inode Run created for a new DST (df, unnamed until
// the copy is complete, or created by name where O_TMPFILE is missing)
// before anything is written, through a read-only descriptor of its own.
func (p *Plan) lockNewDest(df *os.File) error {
	if p.dst.exists {
		return nil
	}
	f, err := openForLock(procFdPath(df), nil)
	if err != nil {
		return err
	}
	p.held = append(p.held, f)
	return p.holdDst(f)
}

func (p *Plan) holdDst(f *os.File) error {
	c, err := lockDst(f)
	if err != nil {
		if lockUnsupported(err) {
			p.note("locks: none on %s: %v", p.dst.path, err)
			return nil
		}
		return &os.PathError{Op: "lock", Path: p.dst.path, Err: err}
	}
	return p.dstHeld(f, c, f)
}

// unlock drops DST's locks by closing their descriptors; SRC's go with the
// copy's SRC descriptor.
func (p *Plan) unlock() {
	for _, f := range p.held {
		f.Close()
	}
	p.held = nil
}

// openForLock opens path (or an unnamed inode's /proc/self/fd link)
// read-only to test or hold locks, and checks it is the object Prepare
// inspected when ep is given.
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

func procFdPath(f *os.File) string {
	return "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
}
