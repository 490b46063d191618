package copier

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ringcp/ringcp/internal/units"
	"golang.org/x/sys/unix"
)

// checkRoom refuses a copy into a file when its filesystem clearly lacks
// the room, instead of failing with ENOSPC after most of the data moved.
//
// Needed: the whole range with --sparse never; else the data DST will
// get, which is SRC's data extents in the range (SEEK_DATA/SEEK_HOLE; a
// device is all data) less the blocks that are all zeros, which zero
// detection leaves as holes (a dd'ed image is full of them). The zeros
// are only known by reading, so only when the data does not fit anyway is
// it read: whole up to sampleAll bytes, else in samples spread over it
// (see nonZero), and an estimate refuses only beyond a margin.
//
// Available: free blocks (f_bfree for root or with CAP_SYS_RESOURCE, who
// may use the blocks ext4 reserves, else f_bavail), plus what DST gives
// back: all its blocks when it is truncated, at most the range's length
// of them when it is overwritten in place (preallocated blocks read as
// holes to SEEK_DATA, so its block count is the honest bound).
//
// A block device has its size check; a reflink needs no room. A
// filesystem that compresses may fit more: Options.Force tries anyway,
// and the runtime ENOSPC path stays for what cannot be known here.
func (p *Plan) checkRoom() error {
	if p.dst.isBlock || p.offloadMode == OffloadReflink || p.Length == 0 {
		return nil
	}
	free, err := p.roomFree()
	if err != nil {
		return nil
	}
	r, err := p.roomNeeded(free)
	if err != nil || r.need <= free+r.margin {
		return nil
	}
	about := ""
	if r.sampled {
		about = "about "
	}
	short := fmt.Sprintf("DST's filesystem has %s free, the copy needs %s%s (%d bytes)%s", units.Format(free), about, units.Format(r.need), r.need, r.how)
	if p.opts.Force {
		p.forced(short)
		return nil
	}
	return refuse(p.opts.Dst, short+" (--force tries anyway)")
}

// room is what the copy allocates on DST: exactly, or estimated within
// margin, and how it was found, for the refusal.
type room struct {
	need, margin int64
	how          string // what need counts, when not the plain range or extents
	sampled      bool
}

// roomNeeded says how much the copy allocates on DST, reading SRC only
// when its data exceeds free.
func (p *Plan) roomNeeded(free int64) (room, error) {
	o := &p.opts
	if o.Sparse == SparseNever {
		return room{need: p.Length}, nil
	}
	f, err := os.OpenFile(o.Src, inspectFlags, 0)
	if err != nil {
		return room{}, err
	}
	defer f.Close()
	ext := extents{{o.SrcOffset, p.Length}}
	if !p.src.isBlock {
		if ext, err = dataExtents(int(f.Fd()), o.SrcOffset, o.SrcOffset+p.Length); err != nil {
			// The filesystem cannot map holes (EINVAL on some FUSE and
			// network filesystems): the engine reads it all as data too.
			ext = extents{{o.SrcOffset, p.Length}}
		}
	}
	data := ext.bytes()
	if data <= free || p.sparse.ZeroBlock == 0 {
		return room{need: data}, nil
	}
	return nonZero(f, ext, data, p.sparse.ZeroBlock)
}

// extent is a run of SRC's data: offset and length.
type extent struct{ off, n int64 }

type extents []extent

func (e extents) bytes() int64 {
	var n int64
	for _, x := range e {
		n += x.n
	}
	return n
}

// dataExtents lists the data of [off, end) that fd maps.
func dataExtents(fd int, off, end int64) (extents, error) {
	var out extents
	for off < end {
		ds, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) || (err == nil && ds >= end) {
			break // only holes from off on
		}
		if err != nil {
			return nil, err
		}
		de, err := unix.Seek(fd, ds, unix.SEEK_HOLE)
		if err != nil {
			return nil, err
		}
		de = min(de, end)
		out = append(out, extent{ds, de - ds})
		off = de
	}
	return out, nil
}

// roomFree is what DST's filesystem can give the copy, counting what DST
// itself gives back.
func (p *Plan) roomFree() (int64, error) {
	at := p.dst.path
	if !p.dst.exists {
		at = filepath.Dir(at)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(at, &st); err != nil {
		return 0, err
	}
	if st.Blocks == 0 {
		// No figures at all: a FUSE server without statfs for this
		// node answers zeros (go-fuse does). That says nothing of room.
		return 0, errors.New("statfs reports no blocks")
	}
	unit := st.Frsize
	if unit == 0 {
		unit = st.Bsize
	}
	blocks := st.Bavail
	if os.Geteuid() == 0 || hasCapSysResource() {
		// ext4 lets its resuid (root by default) and CAP_SYS_RESOURCE
		// use the blocks it reserves; f_bavail leaves them out.
		blocks = st.Bfree
	}
	free := mulClamp(int64(blocks), unit)
	if p.dst.exists {
		held := mulClamp(p.dst.st.Blocks, 512) // st_blocks counts 512-byte units
		if !p.truncate {
			held = min(held, p.Length)
		}
		free = addClamp(free, held)
	}
	return free, nil
}

// hasCapSysResource says whether this process may use the blocks a
// filesystem reserves for root (ext4's reserved blocks) without being root.
func hasCapSysResource() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_SYS_RESOURCE) != 0
}

// mulClamp and addClamp keep byte counts of huge filesystems at
// math.MaxInt64 instead of wrapping negative.
func mulClamp(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > (1<<63-1)/b {
		return 1<<63 - 1
	}
	return a * b
}

func addClamp(a, b int64) int64 {
	if a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}
