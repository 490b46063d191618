package qcow2

import (
	"fmt"
	"sort"
)

// A checkpointing Writer (WriterOptions.Checkpoints) keeps its file a
// valid image at every instant, holding at least what was written before
// the last Checkpoint. A checkpoint never changes what the image on disk
// names: it writes a fresh copy of all the metadata (the L2 tables, the
// L1 table, refcounts counted afresh) into new clusters at the frontier,
// syncs, then switches to it by rewriting the header's first sector,
// syncs again, and only then punches the clusters of the copy it
// replaced and hands them out again. A crash at any point leaves the old
// header and its tables, or the new ones, each whole and consistent:
// `qemu-img check` finds no error. What it counts is what the tables
// name; a cluster written after a checkpoint, or being written, is not
// named by it, and has refcount 0 there (free space, not a leak).
//
// The tables copied include the entries of writes still in flight,
// whose data may not be on disk: a checkpoint vouches for the writes
// that completed before it began, and a resumed copy drops everything
// past the part its state records (Resume).

// Checkpoint makes everything written before it part of the image on
// disk, durably. It may run while writes go on, from another goroutine;
// a partly written cluster still in memory is not part of it.
func (w *Writer) Checkpoint() error {
	w.ckMu.Lock()
	defer w.ckMu.Unlock()
	w.mu.Lock()
	if err := w.err; err != nil {
		w.mu.Unlock()
		return err
	}
	if w.closed {
		w.mu.Unlock()
		return fmt.Errorf("qcow2: %s: checkpoint after Close", w.name)
	}
	snap, lay := w.snapshot()
	w.mu.Unlock()
	return w.fail(w.writeCheckpoint(snap, lay))
}

// snapshot copies the L2 tables and gives the checkpoint's metadata its
// clusters at the frontier; w.mu is held.
func (w *Writer) snapshot() (map[int64][]uint64, *layout) {
	clusters := ceilDiv(w.size, w.cs)
	lay := &layout{l1: make([]uint64, ceilDiv(clusters, w.l2n)), l2Host: map[int64]int64{}}
	snap := make(map[int64][]uint64, len(w.l2))
	idx := make([]int64, 0, len(w.l2))
	for i := range w.l2 {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		snap[i] = append([]uint64(nil), w.l2[i]...)
		lay.l2Host[i] = w.allocClusters(1)
		lay.l1[i] = uint64(lay.l2Host[i]) | entryCopied
	}
	l1Clusters := max(1, ceilDiv(int64(len(lay.l1))*8, w.cs))
	w.sizeRefcounts(lay, w.next/w.cs+l1Clusters)
	lay.blockOff = w.allocClusters(lay.blocks)
	lay.tableOff = w.allocClusters(lay.tableCl)
	lay.l1Off = w.allocClusters(l1Clusters)
	lay.end = w.next
	return snap, lay
}

// writeCheckpoint writes the tables, syncs, switches the header to them,
// syncs, and frees the metadata of the checkpoint they replace.
func (w *Writer) writeCheckpoint(snap map[int64][]uint64, lay *layout) error {
	refs := make([]uint16, lay.end/w.cs)
	refs[0] = 1 // the header
	for i, host := range lay.l2Host {
		for _, e := range snap[i] {
			w.countEntry(e, refs)
		}
		if err := w.writeTable(snap[i], host, refs, true); err != nil {
			return err
		}
	}
	// Padded: the L1 table's cluster is whole whatever the writes after
	// it leave at the file's end.
	if err := w.writeTable(lay.l1, lay.l1Off, refs, true); err != nil {
		return err
	}
	if err := w.writeRefcounts(lay, refs); err != nil {
		return err
	}
	if err := w.sync(); err != nil {
		return err
	}
	if err := w.writeHeader(lay); err != nil {
		return err
	}
	if err := w.sync(); err != nil {
		return err
	}
	old := w.live
	w.live = w.metadataRuns(lay)
	w.release(old)
	return nil
}

// metadataRuns are the clusters of lay's tables, the header aside.
func (w *Writer) metadataRuns(lay *layout) []freeRun {
	var cls []int64
	for _, host := range lay.l2Host {
		cls = append(cls, host/w.cs)
	}
	for c := lay.blockOff / w.cs; c < lay.end/w.cs; c++ {
		cls = append(cls, c) // refcount blocks, table and L1, in a row
	}
	sort.Slice(cls, func(a, b int) bool { return cls[a] < cls[b] })
	return w.clusterRuns(cls)
}
