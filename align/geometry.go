package align

import "fmt"

// Geometry is what one end of a copy allows and prefers.
//
// Sizes are in bytes. A zero in a hint field (LogicalBlockSize,
// PhysicalBlockSize, OptimalIO, MaxIO) means "unknown", never "none".
// MemAlign and OffsetAlign are always positive after Probe: when nothing
// better is known they are 4096, which every Linux O_DIRECT path accepts.
type Geometry struct {
	// Path is the name the file was opened with (f.Name()).
	Path string
	// IsBlockDevice is true for block special files (a disk, a
	// partition, a loop or device-mapper device).
	IsBlockDevice bool
	// Size is the device size from BLKGETSIZE64 for block devices (stat
	// reports 0 for them) or st_size for everything else.
	Size int64
	// LogicalBlockSize is the smallest unit the device addresses
	// (BLKSSZGET, else sysfs queue/logical_block_size). For a regular
	// file it is that of the block device the file system sits on, 0 if
	// there is none (tmpfs, overlayfs, btrfs, NFS, FUSE).
	LogicalBlockSize int
	// PhysicalBlockSize is the unit the device writes without a
	// read-modify-write (BLKPBSZGET, else sysfs queue/physical_block_size),
	// 0 if unknown.
	PhysicalBlockSize int
	// MemAlign is the alignment O_DIRECT needs for buffer addresses:
	// statx dio_mem_align (Linux 6.1+), else sysfs queue/dma_alignment+1
	// (6.0+), else the logical block size, else 4096.
	MemAlign int
	// OffsetAlign is the alignment O_DIRECT needs for file offsets and
	// lengths: statx dio_offset_align (6.1+), else the logical block size,
	// else 4096. It is the write alignment; XFS may accept reads at a finer
	// one (statx dio_read_offset_align, 6.14+), which we do not use.
	OffsetAlign int
	// DirectSupported is false when the kernel says this file cannot do
	// O_DIRECT: statx answered STATX_DIOALIGN with dio_offset_align 0
	// (e.g. ext4 with data=journal, encrypted or inline-data files), or
	// the file is neither a regular file nor a block device. When the
	// kernel does not say (older kernels, tmpfs), it is true and the open
	// with O_DIRECT is the real test.
	DirectSupported bool
	// OptimalIO is sysfs queue/optimal_io_size: the preferred request
	// size, often a RAID stripe width and not always a power of two.
	// 0 if unknown or not reported.
	OptimalIO int
	// MaxIO is sysfs queue/max_sectors_kb*1024: the largest request the
	// block layer sends down without splitting, 0 if unknown.
	MaxIO int
	// Rotational is sysfs queue/rotational. Virtual disks often claim it
	// (virtio-blk does on this test machine), so it is a hint only.
	Rotational bool
	// WriteZeroesMax is sysfs queue/write_zeroes_max_bytes: the largest
	// WRITE_ZEROES the device takes, 0 when it has none and the kernel
	// zeroes by writing pages of zeros (no cheaper than writing data).
	WriteZeroesMax int
	// Notes has one short line per figure saying where it came from,
	// for `ringcp -v`, e.g. "logical block 4096 (BLKSSZGET)".
	Notes []string
}

// DirectAlign returns the alignment that satisfies O_DIRECT on this end
// for addresses, offsets and lengths at once: max(MemAlign, OffsetAlign),
// and never less than 512, the historic sector size that every device
// and file system accepts. Both inputs are powers of two in practice,
// so the larger is also their least common multiple.
func (g Geometry) DirectAlign() int {
	return max(g.MemAlign, g.OffsetAlign, 512)
}

// note appends one line to g.Notes.
func (g *Geometry) note(format string, args ...any) {
	g.Notes = append(g.Notes, fmt.Sprintf(format, args...))
}
