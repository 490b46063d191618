package copier

import (
	"fmt"
	"os"
	"syscall"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"golang.org/x/sys/unix"
)

// The character devices dd's everyday command lines use, as a kind of
// the file kind's paths (inspectFile asks inspectChar first): /dev/zero
// as SRC (a wipe), /dev/urandom and /dev/random as SRC (random data),
// /dev/null as DST (a read test). They are known by their device
// numbers (the kernel's memory devices, major 1), not by their names, so
// a symlink or another node of the same device is the same end.
//
// Each is reached through its descriptor, so both backends run the copy:
// SRC is read with O_DIRECT and a deep queue as any disk, and /dev/null
// takes the writes at once. /dev/zero and /dev/urandom never end: the
// length comes from Options.Length (dd's count=), or, for a DST of a
// fixed size (a block device, an export), from DST's size past
// DstOffset, as `dd if=/dev/zero of=/dev/sdX` wipes the whole disk.
// /dev/zero says it holds no data (charZeros): the engine zeroes DST its
// own way (nothing on a new or cut file, WRITE ZEROES on a device)
// instead of reading zero pages, except where every byte is to be
// written as data (Options.Sparse never on a file: dd's swap files must
// have no holes).
//
// Every other character device is refused, and so are these where the
// copy would not do what a storage admin means: /dev/null as SRC (an
// empty copy, and `ringcp /dev/null disk.img` with the operands swapped
// would empty disk.img), /dev/zero and /dev/full as DST (writes thrown
// away, or failing with ENOSPC: a typo for /dev/null, or a test of
// ringcp itself), /dev/random and /dev/urandom as DST (writes stir the
// kernel's entropy pool: nothing is copied).

// memDevice is one of the kernel's memory devices (major 1).
type memDevice uint32

// The minors of the memory devices ringcp knows (drivers/char/mem.c).
const (
	memNull    memDevice = 3
	memZero    memDevice = 5
	memFull    memDevice = 7
	memRandom  memDevice = 8
	memURandom memDevice = 9
	memMajor             = 1
)

// charRefusals says why a memory device is refused as SRC or DST.
var charRefusals = map[role]map[memDevice]string{
	roleSrc: {
		memNull: "is /dev/null, which reads nothing: the copy would be empty (with the operands swapped, `ringcp /dev/null disk.img` would empty disk.img); to empty a file, truncate it",
		memFull: "is /dev/full, which reads as /dev/zero: give /dev/zero",
	},
	roleDst: {
		memZero:    "is /dev/zero, which throws writes away: for a read test DST is /dev/null",
		memFull:    "is /dev/full, where every write fails (ENOSPC): nothing can be copied to it",
		memRandom:  "is a random device: writes to it stir the kernel's entropy pool, nothing is copied",
		memURandom: "is a random device: writes to it stir the kernel's entropy pool, nothing is copied",
	},
}

// charEnd is a memory device as SRC (zero, random) or DST (null).
type charEnd struct {
	ep   *endpoint
	dev  memDevice
	rdev uint64
}

var _ end = (*charEnd)(nil)

// inspectChar takes a path that is a character device; ok false for
// anything else (the file kind looks at it).
func inspectChar(p *Plan, path string, r role) (ep *endpoint, err error, ok bool) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return nil, nil, false
	}
	ep = &endpoint{path: path, role: r, exists: true}
	c := &charEnd{ep: ep, dev: memDevice(unix.Minor(st.Rdev)), rdev: st.Rdev}
	ep.end = c
	if e := refusePlanted(path); e != nil {
		return ep, e.on(r.field()), true
	}
	if unix.Major(st.Rdev) != memMajor {
		return ep, kindError(path, st.Mode).on(r.field()), true
	}
	if why, ok := charRefusals[r][c.dev]; ok {
		return ep, refuse(KindNotSupported, path, why).on(r.field()), true
	}
	switch {
	case r == roleSrc && c.dev == memZero:
		ep.what, ep.allZeros, ep.mapsHoles = "zero device", true, true
	case r == roleSrc && (c.dev == memURandom || c.dev == memRandom):
		ep.what = "random device"
	case r == roleDst && c.dev == memNull:
		ep.what, ep.sizeless = "null device", true
	default:
		return ep, kindError(path, st.Mode).on(r.field()), true
	}
	ep.geo = align.Geometry{Path: path, Size: -1, MemAlign: 1, OffsetAlign: 1}
	return ep, nil, true
}

// endless: a SRC that never ends, whose size the copy gives it.
func (c *charEnd) endless() bool { return c.ep.role == roleSrc }

// checkAlone settles an endless SRC's size: the range asked for, else
// what a DST of a fixed size holds past DstOffset (a wipe of a whole
// device). A DST of no fixed size needs the length.
func (c *charEnd) checkAlone(p *Plan) error {
	if !c.endless() {
		c.ep.geo.Size = 0
		return nil
	}
	o := &p.opts
	switch {
	case o.LengthSet:
		c.ep.geo.Size = o.SrcOffset + o.Length
	case p.dst.fixedSize:
		c.ep.geo.Size = o.SrcOffset + max(0, p.dst.geo.Size-o.DstOffset)
		p.note("%s never ends: the copy fills %s from %d to its end (%d bytes)", c.ep.path, p.dst.path, o.DstOffset, c.ep.geo.Size-o.SrcOffset)
	default:
		return refuse(KindBadInput, c.ep.path, fmt.Sprintf("SRC (%s) never ends and DST (%s) has no size of its own: give the length to copy (Options.Length)", c.ep.what, p.dst.what)).on("Length")
	}
	return nil
}

// check refuses what needs to read an end again or know it later: a
// verification, a checksum, a resume state, a sync or a copy of changed
// ranges (random data reads differently twice, /dev/null holds nothing).
func (c *charEnd) check(p *Plan) error {
	o := &p.opts
	no := func(field, what string) error {
		return refuse(KindNotSupported, c.ep.path, fmt.Sprintf("%s: %s is not storage, it cannot be read again or known later", what, c.ep.what)).on(field)
	}
	switch {
	case o.Verify:
		return no("Verify", "Options.Verify")
	case o.Checksum != nil:
		return no("Checksum", "Options.Checksum")
	case o.Resume:
		return no("Resume", "Options.Resume")
	case o.Sync || o.restricted():
		return no("Sync", "a copy of what changed")
	}
	return nil
}

func (c *charEnd) same(*endpoint) (bool, string)                    { return false, "" }
func (c *charEnd) overlap(byteRange, *endpoint, byteRange) *overlap { return nil }
func (c *charEnd) directObstacle(*Plan, int64) string               { return "" }
func (c *charEnd) uringObstacle(string) string                      { return "" }
func (c *charEnd) space(*Plan) (dstSpace, bool)                     { return dstSpace{}, false }
func (c *charEnd) lock(*Plan, *held, *Report) error                 { return nil }
func (c *charEnd) close() error                                     { return nil }

func (c *charEnd) identity() (identity, error) {
	return identity{Path: c.ep.path, Kind: c.ep.what}, nil
}

// srcData: the zero device has no data where its holes are mapped;
// random data is all data. Neither is read to count zero blocks.
func (c *charEnd) srcData(p *Plan) (srcData, error) {
	if c.ep.allZeros && p.sparse.MapHoles {
		return srcData{}, nil
	}
	return srcData{ext: dataRange(p.opts.SrcOffset, p.Length)}, nil
}

// openAs opens the device, checked to be the one inspected.
func (c *charEnd) openAs(flag int) (*os.File, error) {
	f, err := os.OpenFile(c.ep.path, flag|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, refuseOpen(c.ep.path, err).on(c.ep.role.field())
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != c.rdev {
		f.Close()
		return nil, refuse(KindChanged, c.ep.path, "is no longer the device Prepare looked at").on(c.ep.role.field())
	}
	return f, nil
}

// open opens SRC; the zero device's Data says it holds no data.
func (c *charEnd) open(*Plan, *Report) (*held, error) {
	f, err := c.openAs(os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	h := &held{f: f, align: 1, release: func() { f.Close() }}
	if c.ep.allZeros {
		h.mapped = zeroMap{name: c.ep.path}
	}
	return h, nil
}

// openDst opens /dev/null to be written.
func (c *charEnd) openDst(*Plan, *Report) (target, error) {
	f, err := c.openAs(os.O_WRONLY)
	if err != nil {
		return nil, err
	}
	return &nullTarget{h: &held{f: f, align: 1, release: func() { f.Close() }}}, nil
}

// zeroMap is the engine.Endpoint of the zero device beside its
// descriptor (the backends read the descriptor): no data anywhere.
type zeroMap struct{ name string }

func (z zeroMap) Name() string                              { return z.name }
func (z zeroMap) Data(off, end int64) (int64, int64, error) { return end, end, nil }
func (z zeroMap) Settle() error                             { return nil }
func (z zeroMap) Reserve(int64, int64, bool) error          { return syscall.EOPNOTSUPP }
func (z zeroMap) Truncate(int64) error                      { return syscall.EBADF }
func (z zeroMap) PrepareTail() error                        { return nil }

var _ engine.Endpoint = zeroMap{}

// nullTarget is /dev/null as Run holds it: every byte of SRC is read
// (no holes skipped, no zero scan: the point is to read), the writes
// vanish, and there is nothing to sync, cut or leave.
type nullTarget struct {
	h      *held
	keepIt bool
}

var _ target = (*nullTarget)(nil)

func (t *nullTarget) held() *held                      { return t.h }
func (t *nullTarget) cut(*Plan) error                  { return nil }
func (t *nullTarget) publish(*Plan, bool) error        { return nil }
func (t *nullTarget) discard() bool                    { return false }
func (t *nullTarget) keep(on bool)                     { t.keepIt = on }
func (t *nullTarget) kept() bool                       { return t.keepIt }
func (t *nullTarget) release()                         { t.h.close() }
func (t *nullTarget) identity(*Plan) (identity, error) { return identity{Kind: "null device"}, nil }
func (t *nullTarget) left(*Plan, *Report) DstState     { return DstUntouched }
func (t *nullTarget) endAt(int64) error                { return nil }

// shape: read every byte, write it away, no barrier (fdatasync on
// /dev/null fails with EINVAL, and there is nothing to make durable).
func (t *nullTarget) shape(_ *Plan, job *engine.Job) {
	job.Sync, job.FinalSize, job.Preallocate = false, 0, false
	job.Sparse = engine.Sparse{DstZeroed: true}
}

func (t *nullTarget) readBack(*Plan) (string, error) {
	return "", fmt.Errorf("/dev/null cannot be read back")
}
