package align

// fallbackAlign is the O_DIRECT alignment assumed when nothing is
// reported: the page size on x86-64 and the largest logical block size
// Linux supports on most devices, so it satisfies every known device.
const fallbackAlign = 4096

// fillDirect sets MemAlign, OffsetAlign and DirectSupported, each from
// the best source at hand, in the order docs/io_uring.md gives: statx
// STATX_DIOALIGN (exact, per file), then the block queue, then the
// logical block size, then fallbackAlign. Call it after the block sizes
// are known; q may be nil.
func (g *Geometry) fillDirect(st statInfo, q *queueInfo) {
	if st.dio && st.dioOffset == 0 && g.DirectSupported {
		// The kernel answered the question and the answer is "no":
		// e.g. ext4 data=journal, fscrypt without inline crypto, or
		// inline-data files. Opening with O_DIRECT would fail (EINVAL).
		g.DirectSupported = false
		g.note("no O_DIRECT on this file (statx dio_offset_align 0)")
	} else if !st.dio && g.DirectSupported {
		g.note("%s reports no STATX_DIOALIGN (before Linux 6.1, or the file system does not say)", st.how)
	}
	g.fillMemAlign(st, q)
	g.fillOffsetAlign(st)
}

func (g *Geometry) fillMemAlign(st statInfo, q *queueInfo) {
	switch {
	case st.dio && st.dioMem > 0:
		g.MemAlign = st.dioMem
		g.note("O_DIRECT memory alignment %d (statx dio_mem_align)", g.MemAlign)
	case q != nil && q.DMAAlignment >= 0:
		// dma_alignment is a mask (511 means 512-byte aligned); sysfs
		// has it since Linux 6.0.
		g.MemAlign = q.DMAAlignment + 1
		g.note("O_DIRECT memory alignment %d (sysfs %s queue/dma_alignment %d + 1)",
			g.MemAlign, q.dev, q.DMAAlignment)
	case g.LogicalBlockSize > 0:
		g.MemAlign = g.LogicalBlockSize
		g.note("O_DIRECT memory alignment %d (the logical block size)", g.MemAlign)
	default:
		g.MemAlign = fallbackAlign
		g.note("O_DIRECT memory alignment %d (assumed: nothing reported)", g.MemAlign)
	}
}

func (g *Geometry) fillOffsetAlign(st statInfo) {
	switch {
	case st.dio && st.dioOffset > 0:
		g.OffsetAlign = st.dioOffset
		g.note("O_DIRECT offset alignment %d (statx dio_offset_align)", g.OffsetAlign)
	case g.LogicalBlockSize > 0:
		g.OffsetAlign = g.LogicalBlockSize
		g.note("O_DIRECT offset alignment %d (the logical block size)", g.OffsetAlign)
	default:
		g.OffsetAlign = fallbackAlign
		g.note("O_DIRECT offset alignment %d (assumed: nothing reported)", g.OffsetAlign)
	}
}
