package qcow2

import (
	"fmt"
	"sort"
)

// A checkpointing Writer (WriterOptions.Checkpoints) keeps its file a
// valid image at every instant, holding at least what was written before
// the last Checkpoint. A checkpoint never changes what the image on disk
// names: it writes a fresh copy of the metadata (the L2 tables changed
// since the last checkpoint, the L1 table, refcounts counted afresh) into
// new clusters at the frontier, syncs, then switches to it by rewriting
// the header's first sector, syncs again, and only then punches the
// clusters the new copy no longer names (the L2 tables it replaced, the
// old L1 table and refcounts) and hands them out again. An L2 table that
// did not change is named by both, where it is: a copy of a large disk
// writes the few tables its last seconds of data changed, not all. A crash at any point leaves the old
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
	ck, lay := w.snapshot()
	w.mu.Unlock()
	// A failure is kept (w.fail): the tables the snapshot took as
	// written are not, and no later checkpoint may reuse the old ones.
	return w.fail(w.writeCheckpoint(ck, lay))
}

// snapshot copies the L2 tables changed since the last checkpoint and
// gives them, and the checkpoint's other metadata, clusters at the
// frontier; the tables that did not change keep theirs. It counts the
// refcounts of all but the tables copied (whose entries writeCheckpoint
// counts) and of the metadata. w.mu is held.
func (w *Writer) snapshot() (*checkpoint, *layout) {
	clusters := ceilDiv(w.size, w.cs)
	lay := &layout{l1: make([]uint64, ceilDiv(clusters, w.l2n)), l2Host: map[int64]int64{}}
	ck := &checkpoint{tables: map[int64][]uint64{}}
	idx := make([]int64, 0, len(w.l2))
	for i := range w.l2 {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		host, kept := w.liveL2[i]
		if !kept || w.changed[i] {
			ck.tables[i] = append([]uint64(nil), w.l2[i]...)
			host = w.allocClusters(1)
		}
		lay.l2Host[i] = host
		lay.l1[i] = uint64(host) | entryCopied
	}
	clear(w.changed)
	l1Clusters := max(1, ceilDiv(int64(len(lay.l1))*8, w.cs))
	w.sizeRefcounts(lay, w.next/w.cs+l1Clusters)
	lay.blockOff = w.allocClusters(lay.blocks)
	lay.tableOff = w.allocClusters(lay.tableCl)
	lay.l1Off = w.allocClusters(l1Clusters)
	lay.end = w.next
	ck.refs = make([]uint16, lay.end/w.cs)
	ck.refs[0] = 1 // the header
	for i, host := range lay.l2Host {
		if _, copied := ck.tables[i]; !copied {
			for _, e := range w.l2[i] {
				w.countEntry(e, ck.refs)
			}
			ck.refs[host/w.cs]++
		}
	}
	return ck, lay
}

// checkpoint is what a checkpoint writes: the L2 tables that changed,
// and the refcounts counted so far.
type checkpoint struct {
	tables map[int64][]uint64
	refs   []uint16
}

// writeCheckpoint writes the tables, syncs, switches the header to them,
// syncs, and frees the metadata of the checkpoint they replace.
func (w *Writer) writeCheckpoint(ck *checkpoint, lay *layout) error {
	refs := ck.refs
	for i, t := range ck.tables {
		for _, e := range t {
			w.countEntry(e, refs)
		}
		if err := w.writeTable(t, lay.l2Host[i], refs, true); err != nil {
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
	if err := w.switchHeader(lay); err != nil {
		return err
	}
	old := w.live
	for i := range ck.tables {
		if host, ok := w.liveL2[i]; ok {
			old = append(old, freeRun{host, host + w.cs}) // replaced
		}
		w.liveL2[i] = lay.l2Host[i]
	}
	// The refcount blocks, table and L1 table, in a row.
	w.live = []freeRun{{lay.blockOff, lay.end}}
	w.release(old)
	return nil
}

// liveRuns is all the metadata of the checkpoint on disk, for Close to
// free once its own tables are live.
func (w *Writer) liveRuns() []freeRun {
	runs := append([]freeRun(nil), w.live...)
	for _, host := range w.liveL2 {
		runs = append(runs, freeRun{host, host + w.cs})
	}
	return runs
}
