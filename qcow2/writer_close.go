package qcow2

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// layout is where Close puts the metadata, after the data.
type layout struct {
	l1       []uint64 // the L1 table, as written
	l2Host   map[int64]int64
	preBase  map[int64]int64 // PreallocMetadata: host of the first preallocated cluster of each table
	l1Off    int64
	blocks   int64 // refcount blocks
	blockOff int64
	tableOff int64 // refcount table
	tableCl  int64 // refcount table clusters
	end      int64 // the file's length
}

// Close finishes the image: the clusters still partly written, every L2
// table, the L1 table, the refcounts, a sync, then the header and a sync
// again, so that the header never names metadata that is not on disk.
// After a failed write, Close writes nothing more and returns that
// failure: the image stays incomplete (no header).
func (w *Writer) Close() error {
	w.ckMu.Lock() // not while a checkpoint is written
	defer w.ckMu.Unlock()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return fmt.Errorf("qcow2: %s: closed twice", w.name)
	}
	w.closed = true
	pending := w.pending
	w.pending = nil
	err := w.err
	w.mu.Unlock()
	if err != nil {
		return err
	}
	if err := w.finishPending(pending); err != nil {
		return w.fail(err)
	}
	return w.fail(w.writeMetadata())
}

// finishPending stores the clusters written in part, in guest order.
func (w *Writer) finishPending(pending map[int64]*partial) error {
	cis := make([]int64, 0, len(pending))
	for ci := range pending {
		cis = append(cis, ci)
	}
	sort.Slice(cis, func(i, j int) bool { return cis[i] < cis[j] })
	for _, ci := range cis {
		if err := w.finishPartial(ci, pending[ci]); err != nil {
			return err
		}
	}
	return nil
}

// writeMetadata lays the metadata out after the data and writes it.
func (w *Writer) writeMetadata() error {
	lay := w.layOut()
	refs := make([]uint16, w.next/w.cs) // 2 bytes per host cluster
	refs[0] = 1                         // the header
	for i := range lay.l1 {
		if err := w.writeL2(i, lay, refs); err != nil {
			return err
		}
	}
	if err := w.writeTable(lay.l1, lay.l1Off, refs, false); err != nil {
		return err
	}
	if err := w.writeRefcounts(lay, refs); err != nil {
		return err
	}
	if err := w.t.Truncate(lay.end); err != nil {
		return &IOError{Op: "truncate", Name: w.name, Off: lay.end, Err: err}
	}
	if err := w.switchHeader(lay); err != nil {
		return err
	}
	w.release(w.liveRuns()) // the last checkpoint's metadata: nothing names it now
	w.live, w.liveL2 = nil, nil
	return nil
}

// writeHeader writes the header naming lay's tables: the whole first
// cluster the first time; after that only its first sector, where the
// offsets and sizes of the tables are (bytes 36 to 60), so that the
// switch from one set of tables to the next is one sector written.
func (w *Writer) writeHeader(lay *layout) error {
	hdr := w.header(lay)
	if w.started {
		hdr = hdr[:512]
	}
	if _, err := w.t.WriteAt(hdr, 0); err != nil {
		return &IOError{Op: "write header", Name: w.name, Err: err}
	}
	w.started = true
	return nil
}

func (w *Writer) sync() error {
	if err := w.t.Sync(); err != nil {
		return &IOError{Op: "fsync", Name: w.name, Err: err}
	}
	return nil
}

// layOut gives host places to the L2 tables (and, preallocating, to the
// clusters nothing was written to), the L1 table and the refcounts.
func (w *Writer) layOut() *layout {
	clusters := ceilDiv(w.size, w.cs)
	lay := &layout{l1: make([]uint64, ceilDiv(clusters, w.l2n)),
		l2Host: map[int64]int64{}, preBase: map[int64]int64{}}
	for i := range int64(len(lay.l1)) {
		t := w.l2[i]
		if w.opt.Preallocation == PreallocMetadata {
			lay.preBase[i] = w.allocClusters(w.unset(t, min(w.l2n, clusters-i*w.l2n)))
		} else if t == nil {
			continue
		}
		lay.l2Host[i] = w.allocClusters(1)
		lay.l1[i] = uint64(lay.l2Host[i]) | entryCopied
	}
	// The refcounts count every host cluster, their own and the L1
	// table's (which comes last, so the file ends with its last entry,
	// as QEMU's does) included: find the fixed point, as QEMU's
	// qcow2_refcount_metadata_size does.
	l1Clusters := ceilDiv(int64(len(lay.l1))*8, w.cs)
	w.sizeRefcounts(lay, w.next/w.cs+l1Clusters)
	lay.blockOff = w.allocClusters(lay.blocks)
	lay.tableOff = w.allocClusters(lay.tableCl)
	lay.end = w.next
	if l1Clusters > 0 {
		lay.l1Off = w.allocClusters(l1Clusters)
		lay.end = lay.l1Off + int64(len(lay.l1))*8
	}
	return lay
}

// sizeRefcounts finds how many refcount blocks and table clusters count
// the image's clusters, theirs included: the fixed point, as QEMU's
// qcow2_refcount_metadata_size finds it. clusters counts all the others.
func (w *Writer) sizeRefcounts(lay *layout, clusters int64) {
	perBlock, perTable := w.cs/2, w.cs/8
	for {
		blocks := ceilDiv(clusters+lay.blocks+lay.tableCl, perBlock)
		table := ceilDiv(blocks, perTable)
		if blocks == lay.blocks && table == lay.tableCl {
			return
		}
		lay.blocks, lay.tableCl = blocks, table
	}
}

// unset counts the entries of t (nil: all) among the first n that
// nothing was written to.
func (w *Writer) unset(t []uint64, n int64) int64 {
	if t == nil {
		return n
	}
	var c int64
	for _, e := range t[:n] {
		if e == 0 {
			c++
		}
	}
	return c
}

// writeL2 writes L2 table i, and counts the references it holds.
func (w *Writer) writeL2(i int, lay *layout, refs []uint16) error {
	host, ok := lay.l2Host[int64(i)]
	if !ok {
		return nil
	}
	t := w.l2[int64(i)]
	if t == nil {
		t = make([]uint64, w.l2n)
	}
	if base, ok := lay.preBase[int64(i)]; ok {
		n := min(w.l2n, ceilDiv(w.size, w.cs)-int64(i)*w.l2n)
		for k := range t[:n] {
			if t[k] == 0 {
				t[k] = uint64(base) | entryCopied
				base += w.cs
			}
		}
	}
	for _, e := range t {
		w.countEntry(e, refs)
	}
	delete(w.l2, int64(i)) // written: its memory can go
	return w.writeTable(t, host, refs, true)
}

// countEntry adds an L2 entry's references to the refcounts.
func (w *Writer) countEntry(e uint64, refs []uint16) {
	switch {
	case e&entryCompressed != 0:
		shift := 62 - (w.cbits - 8)
		off := int64(e & (1<<shift - 1))
		sectors := int64(e>>shift&(1<<(w.cbits-8)-1)) + 1
		end := off&^511 + sectors*512
		for c := off / w.cs; c <= (end-1)/w.cs; c++ {
			refs[c]++
		}
	case e&entryOffsetMask != 0:
		refs[int64(e&entryOffsetMask)/w.cs]++
	}
}

// writeTable writes a table of entries at host, padded to whole
// clusters or not (the last table of the file), and counts its clusters.
func (w *Writer) writeTable(t []uint64, host int64, refs []uint16, pad bool) error {
	if len(t) == 0 {
		return nil
	}
	clusters := ceilDiv(int64(len(t))*8, w.cs)
	n := int64(len(t)) * 8
	if pad {
		n = clusters * w.cs
	}
	b := make([]byte, n)
	for k, e := range t {
		binary.BigEndian.PutUint64(b[k*8:], e)
	}
	for c := host / w.cs; c < host/w.cs+clusters; c++ {
		refs[c]++
	}
	if _, err := w.t.WriteAt(b, host); err != nil {
		return &IOError{Op: "write metadata", Name: w.name, Off: host, Err: err}
	}
	return nil
}

// writeRefcounts writes the refcount blocks and the refcount table.
func (w *Writer) writeRefcounts(lay *layout, refs []uint16) error {
	for c := lay.blockOff / w.cs; c < lay.tableOff/w.cs+lay.tableCl; c++ {
		refs[c]++ // the refcount blocks and table themselves
	}
	perBlock := w.cs / 2
	table := make([]uint64, lay.tableCl*w.cs/8)
	b := make([]byte, w.cs)
	for k := range lay.blocks {
		clear(b)
		first := k * perBlock
		for j := first; j < min(first+perBlock, int64(len(refs))); j++ {
			binary.BigEndian.PutUint16(b[(j-first)*2:], refs[j])
		}
		host := lay.blockOff + k*w.cs
		if _, err := w.t.WriteAt(b, host); err != nil {
			return &IOError{Op: "write refcounts", Name: w.name, Off: host, Err: err}
		}
		table[k] = uint64(host)
	}
	tb := make([]byte, len(table)*8)
	for k, e := range table {
		binary.BigEndian.PutUint64(tb[k*8:], e)
	}
	if _, err := w.t.WriteAt(tb, lay.tableOff); err != nil {
		return &IOError{Op: "write refcounts", Name: w.name, Off: lay.tableOff, Err: err}
	}
	return nil
}

// switchHeader makes the tables written at lay the image's: they are
// synced first, then the header that names them is written and synced,
// so that a crash leaves the header naming either copy, whole.
func (w *Writer) switchHeader(lay *layout) error {
	if err := w.sync(); err != nil {
		return err
	}
	if err := w.writeHeader(lay); err != nil {
		return err
	}
	return w.sync()
}
