package engine

import (
	"errors"
	"math"
	"syscall"

	"github.com/ringcp/ringcp/align"
)

// Sizes of planning steps.
const (
	// maxHoleChunk caps one hole chunk: one fallocate call zeroes at most
	// this, and a hole of terabytes still moves in visible steps.
	maxHoleChunk = 1 << 30
	// preallocWindow is how far ahead of the writes DST is reserved: few
	// fallocate calls, and never a reservation far beyond what is copied.
	preallocWindow = 1 << 30
)

// chunk is a piece of the range for one slot: data to read and write, or a
// hole that is never read.
type chunk struct {
	rel  int64
	n    int
	hole bool
}

// planner cuts the range into chunks as the copy goes. With MapHoles it
// asks SRC where its data is one extent at a time, never for the whole
// file up front.
type planner struct {
	job     *Job
	pos     int64 // next offset to plan, from the range start
	mapping bool
	// [dataStart, dataEnd) is the data extent at or after pos; before
	// dataStart is a hole.
	dataStart, dataEnd int64
	holeAlign          int64
	prealloc           bool
	reserved           int64 // DST is reserved up to here
	// zeros: a zero run was found in reserved blocks; what is reserved
	// ahead is given back and no more is reserved (zerosReserved).
	zeros bool
	ri    int // with Job.RangesOnly: the range at or after pos
}

func newPlanner(job *Job) planner {
	// A compare reads both sides everywhere: DST may hold data where SRC
	// has a hole, and that is a difference.
	// So does a sync. Only some ranges are not reserved as a whole.
	p := planner{job: job, mapping: job.MapHoles && !job.comparing() && !job.syncing(),
		prealloc: job.Preallocate && !job.RangesOnly, dataEnd: job.Length}
	if p.mapping {
		p.dataEnd = 0 // nothing mapped yet
	}
	p.holeAlign = max(int64(max(job.SrcAlign, job.DstAlign, job.HoleAlign, 1)), job.Grid)
	return p
}

func (p *planner) done() bool { return p.pos >= p.job.Length }

// next plans the next chunk: data at most most bytes long (a multiple of
// the alignment), unless a grid keeps it whole; or a hole.
func (p *planner) next(most int) (chunk, error) {
	if p.mapping && p.pos >= p.dataEnd {
		if err := p.mapFrom(p.pos); err != nil {
			return chunk{}, err
		}
	}
	if p.pos < p.dataStart {
		end := p.pos + min(p.dataStart-p.pos, maxHoleChunk, p.limit()-p.pos) // no pos+maxHoleChunk: it wraps near 2^63
		c := chunk{rel: p.pos, n: int(end - p.pos), hole: true}
		p.pos = end
		return c, nil
	}
	n := min(int64(p.job.chunkMax()), p.dataEnd-p.pos, p.limit()-p.pos)
	if g := p.job.Grid; g > 0 {
		n = min(n, g-p.pos%g) // up to the next multiple of the grid
	} else {
		n = min(n, int64(p.job.chunkCap(most)))
	}
	if err := p.reserve(p.pos + n); err != nil {
		return chunk{}, err
	}
	c := chunk{rel: p.pos, n: int(n)}
	p.pos += n
	return c, nil
}

// giveBack returns the data [from, to) to be planned again, when it is
// the end of the last chunk planned: a chunk waiting for the rate caps
// that was cut smaller (pace.go). It reports whether it took it.
func (p *planner) giveBack(from, to int64) bool {
	if to != p.pos || from >= to || from < p.dataStart {
		return false
	}
	p.pos = from
	return true
}

// mapFrom finds the data extent at or after off (SEEK_DATA/SEEK_HOLE on a
// file, block status on an NBD export).
// Hole edges are rounded inward to holeAlign, so chunks stay aligned for
// O_DIRECT and for fallocate on devices; a few hole bytes read as data cost
// nothing but a read. An unaligned end of the range is always data, so the
// tail path handles it.
func (p *planner) mapFrom(off int64) error {
	base, end := p.job.SrcOff, p.job.Length
	ds, de, err := p.job.end(FileSrc).Data(base+off, base+end)
	switch {
	case errors.Is(err, ErrCannotMap):
		// Everything is data from here on.
		p.mapping, p.dataStart, p.dataEnd = false, off, end
		return nil
	case err != nil:
		return err
	}
	p.dataStart = max(off, align.RoundDown(ds-base, p.holeAlign))
	p.dataEnd = roundUpWithin(de-base, p.holeAlign, end)
	if p.dataStart >= end && end%p.holeAlign != 0 {
		p.dataStart = max(off, align.RoundDown(end, p.holeAlign))
		p.dataEnd = end
	}
	p.dataStart = min(p.dataStart, end)
	return nil
}

// zerosReserved tells whether the zero run at rel (from the range start,
// not one of SRC's holes) lies in blocks this copy reserved, and has the
// planner stop reserving when it does. Reserved blocks read as zeros, but
// keep DST less sparse than SRC unless punched, and a punch costs ext4
// about 180 us (4966 punches of 16 KiB runs: 0.9 s, Linux 6.18 on vda),
// more than writing the run. A disk image's data is full of such runs (a
// file's zero blocks): a 512 MiB copy of one took 1.2-1.4 s reserved and
// punched, 0.5 s with the runs skipped as holes in blocks never reserved.
func (p *planner) zerosReserved(rel int64) bool {
	if rel >= p.reserved {
		return false
	}
	p.zeros = true
	return true
}

// stopReserving gives back, in one call, what was reserved beyond the
// chunks planned (none of it written yet), and has writes allocate what
// they write from here on: a zero run there is then a hole that costs
// nothing. An end that cannot give back (no Unreserver) keeps the
// reservation (as does one that cannot punch, or finds no room to), and
// its zero runs are punched one by one where they can be.
func (p *planner) stopReserving() error {
	p.prealloc = false
	dst := p.job.end(FileDst)
	if u, ok := dst.(Unreserver); ok && p.pos < p.reserved {
		off := p.job.DstOff + p.pos
		var errno syscall.Errno
		switch err := u.Unreserve(off, p.reserved-p.pos); {
		case err == nil:
			p.reserved = p.pos
		case errors.As(err, &errno) && (unsupported(errno) || errno == syscall.ENOSPC || errno == syscall.EDQUOT):
			// No punching here (vfat reserves, but cannot punch), or
			// no room for it (a punch that splits an extent may need a
			// block, on a nearly full file system): the reservation
			// stays, and reads as zeros. Giving back only saves time.
		default:
			return &OpError{Op: "fallocate(PUNCH_HOLE)", Path: dst.Name(), Offset: off, Err: err}
		}
	}
	return p.sizeFirst()
}

// sizeFirst gives a file this copy owns its final size before the first
// write, where fallocate cannot: then no write extends the file. Seen on
// Linux 6.18, ext4 without extents (block-mapped files, no fallocate):
// four O_DIRECT writes extending the file at once, one failing with
// ENOSPC, and another that had completed in full, and was fdatasync'ed
// later, read back as zeros in its last 2 MiB, so a stopped copy's prefix
// was not what it claimed (1 run in 6). Within i_size it never happened
// (0 in 120).
func (p *planner) sizeFirst() error {
	if !p.job.CutBackOnStop || p.job.FinalSize <= 0 {
		return nil
	}
	dst := p.job.end(FileDst)
	if err := dst.Truncate(p.job.FinalSize); err != nil {
		return &OpError{Op: "truncate", Path: dst.Name(), Offset: p.job.FinalSize, Err: err}
	}
	return nil
}

// roundUpWithin rounds n up to a multiple of a, but not past limit. Near
// math.MaxInt64 (a sparse SRC of 8 EiB on XFS or btrfs) the rounding itself
// would wrap negative; what lies beyond limit does not matter then.
func roundUpWithin(n, a, limit int64) int64 {
	if n > math.MaxInt64-(a-1) {
		return limit
	}
	return min(limit, align.RoundUp(n, a))
}

// reserve preallocates DST a window ahead, within the current data extent.
// A file this copy owns gets its size with the blocks (mode 0: writes then
// never extend i_size); a file that holds other data keeps its size.
func (p *planner) reserve(upTo int64) error {
	if p.zeros && p.prealloc {
		return p.stopReserving()
	}
	if !p.prealloc || upTo <= p.reserved {
		return nil
	}
	from := max(p.reserved, p.pos)
	to := max(upTo, from+min(preallocWindow, p.dataEnd-from)) // <= dataEnd, and cannot wrap
	dst := p.job.end(FileDst)
	err := dst.Reserve(p.job.DstOff+from, to-from, !p.job.CutBackOnStop)
	switch {
	case err == nil:
		p.reserved = to
	case errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS):
		p.prealloc = false // no fallocate here: allocate as we write
		return p.sizeFirst()
	case (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) && p.job.ZeroBlock > 0:
		// With zero detection the window may hold zero runs that are
		// never written (SEEK_DATA calls allocated zeros data), so a
		// sparse copy can fit where its reservation does not. Reserving
		// is an optimisation: allocate as we write, and let a write that
		// really finds no room say so. Without zero detection every byte
		// of the window is written, and the error stands: a full file
		// system shows before the data moves. A fallocate that fails
		// for room may keep the blocks it got (ext4 does, Linux 6.18:
		// 46 of 314 MiB on an ext4 of 205 MiB; XFS, btrfs and tmpfs
		// roll it back), and zero runs in them would stay allocated: on
		// a DST that reads zeros the whole window counts as reserved,
		// and is given back with what lies ahead. A DST that holds
		// other data keeps it (its zero runs are zeroed one by one, the
		// blocks reserved or not).
		p.prealloc = false
		if !p.job.DstZeroed {
			return nil
		}
		p.reserved = to
		return p.stopReserving()
	default:
		return &OpError{Op: "fallocate", Path: dst.Name(), Offset: p.job.DstOff + from, Err: err}
	}
	return nil
}
