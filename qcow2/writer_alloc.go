package qcow2

// Host space is handed out from one pointer that only moves forward:
// whole clusters for clusters stored as they are, bytes for compressed
// clusters (packed one after another, as qemu-img convert -c packs them).
// Every host cluster below the pointer is then used by something, so the
// refcounts Close writes leave nothing leaked.

// maxRefcount is the largest 16-bit refcount (refcount_order 4).
const maxRefcount = 1<<16 - 1

// packing is the host cluster compressed clusters are being packed into,
// and how many of them it holds: each one adds to its refcount.
type packing struct {
	cluster int64
	count   int
}

// allocClusters hands out n consecutive host clusters; w.mu is held.
func (w *Writer) allocClusters(n int64) int64 {
	host := (w.next + w.cs - 1) &^ (w.cs - 1)
	w.next = host + n*w.cs
	return host
}

// allocCompressed hands out n bytes for a compressed cluster (n < cs).
// A host cluster takes compressed clusters until its refcount would
// overflow.
func (w *Writer) allocCompressed(n int64) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	host := w.next
	first := host / w.cs
	if first == w.packed.cluster && w.packed.count >= maxRefcount {
		host = w.allocClusters(0)
		first = host / w.cs
	}
	if first != w.packed.cluster {
		w.packed = packing{cluster: first}
	}
	w.packed.count++
	if last := (host + n - 1) / w.cs; last != first {
		w.packed = packing{cluster: last, count: 1}
	}
	w.next = host + n
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
	host := w.allocClusters(1)
	t[ci%w.l2n] = uint64(host) | entryCopied
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
