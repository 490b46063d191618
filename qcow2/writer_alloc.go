package qcow2

// Host space is handed out as QEMU's allocator does: whole clusters
// from a frontier that only moves forward, for clusters stored as they
// are; and bytes packed one after another into partly used clusters, for
// compressed clusters (as qemu-img convert -c packs them). A compressed
// cluster runs on into the next host cluster only where that one is the
// frontier's next. Every host cluster below the frontier is then used by
// something, so the refcounts Close writes leave nothing leaked.
//
// Writes come out of order from many goroutines, so clusters stored as
// they are come between compressed ones: a few packing clusters are kept
// open at once, and a compressed cluster goes into the first with room,
// so that little of any is left unused.

// maxRefcount is the largest 16-bit refcount (refcount_order 4).
const maxRefcount = 1<<16 - 1

// maxPacks is how many packing clusters are open at once.
const maxPacks = 8

// packing is a stretch of host bytes compressed clusters are packed
// into: the next free byte, the end of its clusters, and how many
// compressed clusters the host cluster of off holds (each one adds to its
// refcount).
type packing struct {
	off, end int64
	count    int
}

// allocClusters hands out n consecutive host clusters at the frontier;
// w.mu is held.
func (w *Writer) allocClusters(n int64) int64 {
	host := w.next
	w.next += n * w.cs
	return host
}

// allocCompressed hands out n bytes for a compressed cluster (n < cs):
// in the first open packing with room, else at the end of the one that
// ends at the frontier, else in a new cluster.
func (w *Writer) allocCompressed(n int64) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.packs {
		if p := &w.packs[i]; p.off+n <= p.end && p.count < maxRefcount {
			return w.take(p, n)
		}
	}
	for i := range w.packs {
		if p := &w.packs[i]; p.end == w.next && p.count < maxRefcount {
			w.allocClusters(ceilDiv(p.off+n-p.end, w.cs))
			p.end = w.next
			return w.take(p, n)
		}
	}
	if len(w.packs) == maxPacks { // close the fullest
		fullest := 0
		for i, p := range w.packs {
			if p.end-p.off < w.packs[fullest].end-w.packs[fullest].off {
				fullest = i
			}
		}
		w.packs = append(w.packs[:fullest], w.packs[fullest+1:]...)
	}
	host := w.allocCluster()
	w.packs = append(w.packs, packing{off: host, end: host + w.cs})
	return w.take(&w.packs[len(w.packs)-1], n)
}

// take gives out the next n bytes of p.
func (w *Writer) take(p *packing, n int64) int64 {
	host := p.off
	p.count++
	if (host+n-1)/w.cs != host/w.cs {
		p.count = 1 // from now on the refcount that matters is the next cluster's
	}
	p.off += n
	if p.off%w.cs == 0 {
		p.count = 0 // the next one starts a fresh cluster
	}
	return host
}

// hostCluster is cluster ci's host cluster, given one now if it has none
// (for pieces written straight to it).
func (w *Writer) hostCluster(ci int64) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.table(ci / w.l2n)
	if e := t[ci%w.l2n]; e != 0 {
		return int64(e & entryOffsetMask)
	}
	host := w.allocCluster()
	w.setEntryLocked(ci, uint64(host)|entryCopied)
	return host
}

// setEntry sets cluster ci's L2 entry.
func (w *Writer) setEntry(ci int64, e uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.setEntryLocked(ci, e)
}

func (w *Writer) setEntryLocked(ci int64, e uint64) {
	w.table(ci / w.l2n)[ci%w.l2n] = e
	if w.opt.Checkpoints {
		w.changed[ci/w.l2n] = true // the next checkpoint writes it anew
	}
}

// table is the L2 table of L1 index i, made on first use; w.mu is held.
func (w *Writer) table(i int64) []uint64 {
	t := w.l2[i]
	if t == nil {
		t = make([]uint64, w.l2n)
		w.l2[i] = t
	}
	return t
}
