package guard

import (
	"errors"
	"github.com/ringcp/ringcp/internal/eintr"
	"os"

	"golang.org/x/sys/unix"
)

// QEMU's image locks (block/file-posix.c raw_apply_lock_bytes and
// raw_check_lock_bytes, QEMU 2.10+; the bits from include/block/
// block-common.h) are OFD read locks (F_OFD_SETLK, F_RDLCK) on single bytes
// of the image file or device node:
//
//	byte 100+i  RAW_LOCK_PERM_BASE:   "I hold permission i"
//	byte 200+i  RAW_LOCK_SHARED_BASE: "nobody else may take permission i"
//
// i is the bit of BLK_PERM_CONSISTENT_READ (0), BLK_PERM_WRITE (1),
// BLK_PERM_WRITE_UNCHANGED (2), BLK_PERM_RESIZE (3) and the old
// BLK_PERM_GRAPH_MOD (4: gone in QEMU 6.2, still locked by older ones).
// QEMU locks its bytes first, then tests with F_OFD_GETLK for a write lock
// (any lock another open file holds conflicts): byte 200+i for each
// permission it wants, byte 100+i for each it does not share; a hit refuses
// the open ("Failed to get "write" lock"). Read locks never conflict with
// each other, so the meaning is in which bytes are held. qemu-nbd serving
// an image writable holds 100-101 and 203; read-only (-r), 100 and 203.
const (
	qemuPermBase   = 100 // RAW_LOCK_PERM_BASE
	qemuSharedBase = 200 // RAW_LOCK_SHARED_BASE
	qemuPerms      = 5   // bits 0-4, graph-mod included for QEMU <= 6.1

	permRead   = 0 // BLK_PERM_CONSISTENT_READ
	permWrite  = 1 // BLK_PERM_WRITE; 2 is BLK_PERM_WRITE_UNCHANGED
	permResize = 3 // BLK_PERM_RESIZE
	lockEOF    = 0 // a length of 0 locks or tests to the end of the file
)

// What a Conflict is, in words for a message ("qemu-nbd (pid 42) holds
// QEMU image locks on it").
const (
	QEMULocks = "QEMU image locks"     // one of QEMU's lock bytes
	WriteLock = "a write lock (fcntl)" // an fcntl or OFD write lock
	Flock     = "a flock(2) lock"      // flock(2), LOCK_SH or LOCK_EX
)

// byteRange is n bytes at off; n == lockEOF: to the end of the file.
type byteRange struct{ off, n int64 }

var (
	// srcTake: ringcp reads SRC as QEMU's read-only users do: it holds
	// consistent read and does not share write or resize, so no QEMU can
	// open SRC for writing or resize it while the copy reads it.
	srcTake = []byteRange{{qemuPermBase + permRead, 1}, {qemuSharedBase + permWrite, 1}, {qemuSharedBase + permResize, 1}}
	// srcTest: someone holds write or resize (a VM writing its disk,
	// qemu-nbd serving it writable, a ringcp copying onto it), or does not
	// share consistent reads (its content is mid-change): a copy read now
	// would mix old and new blocks.
	srcTest = []byteRange{{qemuSharedBase + permRead, 1}, {qemuPermBase + permWrite, 1}, {qemuPermBase + permResize, 1}}
	// dstTake: ringcp holds write, write unchanged and resize (bytes
	// 101-103) and shares nothing (200-204), so every QEMU open that
	// reads or writes DST fails, a read-only one too: its content is
	// mid-copy. (qemu-img info asks for no permission and still works.)
	dstTake = []byteRange{{qemuPermBase + permWrite, permResize - permWrite + 1}, {qemuSharedBase, qemuPerms}}
	// dstTest: any QEMU byte at all: a VM, qemu-nbd (read-only too),
	// qemu-img or another ringcp uses DST.
	dstTest = []byteRange{{qemuPermBase, qemuPerms}, {qemuSharedBase, qemuPerms}}
)

// Conflict is a lock another open file holds that stops a copy.
type Conflict struct {
	What  string                // QEMULocks, WriteLock or Flock
	match func(l heldLock) bool // which of the kernel's lock lines show it
}

// ofdSet takes an OFD lock of typ on r, without waiting.
func ofdSet(f *os.File, typ int16, r byteRange) error {
	lk := unix.Flock_t{Type: typ, Start: r.off, Len: r.n} // Whence 0: SEEK_SET
	return fcntlLock(f, unix.F_OFD_SETLK, &lk)
}

// ofdTest returns a lock that another open file holds on r and that
// conflicts with typ, or nil: F_WRLCK finds any lock, F_RDLCK write locks
// only. Locks of f's own open file never conflict.
func ofdTest(f *os.File, typ int16, r byteRange) (*unix.Flock_t, error) {
	lk := unix.Flock_t{Type: typ, Start: r.off, Len: r.n} // Whence 0: SEEK_SET
	if err := fcntlLock(f, unix.F_OFD_GETLK, &lk); err != nil {
		return nil, err
	}
	if lk.Type == unix.F_UNLCK {
		return nil, nil
	}
	return &lk, nil
}

func fcntlLock(f *os.File, cmd int, lk *unix.Flock_t) error {
	// EINTR: a signal while a network filesystem answered.
	return eintr.RetryErr(func() error { return unix.FcntlFlock(f.Fd(), cmd, lk) })
}

// flockEx takes flock(2) LOCK_EX without waiting; busy is true when someone
// holds LOCK_EX or LOCK_SH.
func flockEx(f *os.File) (busy bool, err error) {
	err = eintr.RetryErr(func() error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) })
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

// LockUnsupported says err means that this file system takes no locks,
// and a copy may go on without them (QEMU's locking=auto does the same).
// EOPNOTSUPP: some FUSE and network file systems; ENOLCK: NFS without a
// lock manager; EINVAL: no OFD locks (kernels before 3.15).
func LockUnsupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EINVAL)
}

// testQemu returns the first lock another open file holds on rs.
func testQemu(f *os.File, rs []byteRange) (*Conflict, error) {
	for _, r := range rs {
		lk, err := ofdTest(f, unix.F_WRLCK, r)
		switch {
		case err != nil:
			return nil, err
		case lk == nil:
			continue
		case lk.Type == unix.F_WRLCK:
			return writeConflict(r), nil
		}
		return qemuConflict(rs), nil
	}
	return nil, nil
}

// testWriteLock returns a write lock (fcntl or OFD) another open file holds
// anywhere on f: its holder writes the file or guards it.
func testWriteLock(f *os.File) (*Conflict, error) {
	lk, err := ofdTest(f, unix.F_RDLCK, byteRange{0, lockEOF})
	if err != nil || lk == nil {
		return nil, err
	}
	return writeConflict(byteRange{0, lockEOF}), nil
}

func qemuConflict(rs []byteRange) *Conflict {
	return &Conflict{What: QEMULocks, match: func(l heldLock) bool {
		if l.class == "FLOCK" {
			return false // flock is whole-file, not one of QEMU's bytes
		}
		for _, r := range rs {
			if l.overlaps(r) {
				return true
			}
		}
		return false
	}}
}

func writeConflict(r byteRange) *Conflict {
	return &Conflict{What: WriteLock, match: func(l heldLock) bool {
		return l.class != "FLOCK" && l.write && l.overlaps(r)
	}}
}

var flockConflict = &Conflict{What: Flock, match: func(l heldLock) bool { return l.class == "FLOCK" }}

// CheckSrc says whether another open file holds f (a copy's SRC) for
// writing by QEMU's locks: someone holds write or resize (a VM writing its
// disk, qemu-nbd serving it writable, a ringcp copying onto it), or does
// not share consistent reads (its content is mid-change). A copy read now
// would mix old and new blocks. Read-only users (qemu-nbd -r) do not
// conflict. It only tests, through any descriptor, read-only will do.
func CheckSrc(f *os.File) (*Conflict, error) {
	return testQemu(f, srcTest)
}

// CheckDst says which lock another open file holds on f (a copy's DST):
// any of QEMU's bytes (a VM, qemu-nbd, qemu-img, a ringcp), a write lock
// anywhere, or flock. It changes nothing that lasts, through a read-only
// descriptor: the flock probe takes LOCK_EX and drops it at once.
func CheckDst(f *os.File) (*Conflict, error) {
	if c, err := testDst(f); c != nil || err != nil {
		return c, err
	}
	busy, err := flockEx(f)
	if err != nil {
		return nil, err
	}
	if busy {
		return flockConflict, nil
	}
	return nil, unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

// testDst: QEMU's bytes, then write locks anywhere.
func testDst(f *os.File) (*Conflict, error) {
	if c, err := testQemu(f, dstTest); c != nil || err != nil {
		return c, err
	}
	return testWriteLock(f)
}

// LockDst takes a DST's locks on f, a read-only descriptor the caller
// keeps open for the whole copy (closing it drops them), and returns the
// lock someone else holds, if any: flock LOCK_EX first, which settles a
// race between two ringcps at once; then QEMU's write, write-unchanged and
// resize bytes, sharing none, locked first and tested after, as QEMU does,
// so that a QEMU opening DST at the same moment sees them too. With them,
// every QEMU open that reads or writes DST fails, a read-only one too.
func LockDst(f *os.File) (*Conflict, error) {
	busy, err := flockEx(f)
	switch {
	case err != nil:
		return nil, err
	case busy:
		return flockConflict, nil
	}
	if c, err := takeBytes(f, dstTake); c != nil || err != nil {
		return c, err
	}
	return testDst(f)
}

// LockSrc takes QEMU's shared read locks on f, a SRC's descriptor kept
// open for the copy, as QEMU's read-only users do: it holds consistent
// read and shares neither write nor resize, so no QEMU can open SRC for
// writing or resize it meanwhile. It returns what holds SRC for writing,
// if anything (as CheckSrc).
func LockSrc(f *os.File) (*Conflict, error) {
	if c, err := takeBytes(f, srcTake); c != nil || err != nil {
		return c, err
	}
	return testQemu(f, srcTest)
}

// takeBytes takes OFD read locks on rs; someone's write lock on one of
// them (EAGAIN, or EACCES on some systems) is a conflict.
func takeBytes(f *os.File, rs []byteRange) (*Conflict, error) {
	for _, r := range rs {
		err := ofdSet(f, unix.F_RDLCK, r)
		switch {
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES):
			return writeConflict(r), nil
		case err != nil:
			return nil, err
		}
	}
	return nil, nil
}
