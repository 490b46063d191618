package qcow2

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// refPlan is where Close puts the refcount blocks and table the new
// clusters need.
type refPlan struct {
	table    []uint64 // refcount table entries, as they will be
	tableOff int64    // its host offset: the image's, or a new one
	tableCl  int64    // its clusters
	moved    bool     // a new, larger table replaces the image's
	oldOff   int64    // the image's table, released when moved
	oldCl    int64
	newBlock map[int64]bool // refcount blocks made new (read as zeros)
}

// Close writes the metadata (see Updater for the order), syncing between
// steps, and releases the image's chain. After a failed write it writes
// nothing and returns that failure: the data written stays where it is,
// and the image as it was still describes it.
func (u *Updater) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return fmt.Errorf("qcow2: %s: closed twice", u.name)
	}
	u.closed = true
	err := u.err
	u.mu.Unlock()
	defer u.im.Close()
	if err != nil {
		return err
	}
	return u.fail(u.writeMetadata())
}

// writeMetadata: new L2 tables placed, refcount increases, tables,
// decreases.
func (u *Updater) writeMetadata() error {
	l1 := append([]uint64(nil), u.im.l1...)
	l2Host := map[int64]int64{}
	for _, i := range u.dirtyTables() {
		if e := l1[i]; e&entryCopied != 0 && e&entryOffsetMask != 0 {
			l2Host[i] = int64(e & entryOffsetMask)
			continue
		}
		if off := l1[i] & entryOffsetMask; off != 0 {
			u.freed = append(u.freed, int64(off)/u.cs) // a shared table: ours is a copy
		}
		l2Host[i] = u.alloc()
		l1[i] = uint64(l2Host[i]) | entryCopied
	}
	rp, err := u.planRefcounts()
	if err != nil {
		return err
	}
	if err := u.sync(); err != nil { // the data, before anything names it
		return err
	}
	if err := u.increase(rp); err != nil {
		return err
	}
	for i, host := range l2Host {
		if err := u.writeEntries(u.l2[i], host, true); err != nil {
			return err
		}
	}
	if len(l2Host) > 0 {
		if err := u.writeEntries(l1, int64(u.im.h.L1TableOffset), false); err != nil {
			return err
		}
	}
	if err := u.sync(); err != nil {
		return err
	}
	return u.decrease(rp)
}

// dirtyTables is the changed L2 tables' L1 indexes, in order.
func (u *Updater) dirtyTables() []int64 {
	var out []int64
	for i := range u.dirty {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

// planRefcounts gives refcount blocks to the new clusters that have
// none, and a larger table when the image's cannot hold their entries:
// new blocks and a new table are clusters too, that need counting (the
// fixed point QEMU's qcow2_refcount_metadata_size finds).
func (u *Updater) planRefcounts() (*refPlan, error) {
	h := u.im.h
	rp := &refPlan{tableOff: int64(h.RefTableOffset), tableCl: int64(h.RefTableClusters), newBlock: map[int64]bool{}}
	b := make([]byte, rp.tableCl*u.cs)
	if err := readFull(u.t, b, rp.tableOff); err != nil {
		return nil, err
	}
	rp.table = decodeTable(b)
	perBlock := u.cs / 2
	first := u.start / u.cs / perBlock // the blocks of the old clusters exist
	var blocks, tableCl int64
	for {
		end := u.next/u.cs + blocks + tableCl // host clusters once they are placed
		need := ceilDiv(end, perBlock)
		var missing int64
		for k := first; k < need; k++ {
			if k >= int64(len(rp.table)) || rp.table[k] == 0 {
				missing++
			}
		}
		var cl int64
		if need > int64(len(rp.table)) {
			cl = ceilDiv(need*8, u.cs) + 1 // room to spare
		}
		if missing == blocks && cl == tableCl {
			break
		}
		blocks, tableCl = missing, cl
	}
	need := ceilDiv(u.next/u.cs+blocks+tableCl, perBlock)
	if tableCl > 0 {
		if tableCl*u.cs > maxRefTableBytes {
			return nil, malformed(u.name, "the refcount table would grow past QEMU's limit")
		}
		rp.oldOff, rp.oldCl, rp.moved = rp.tableOff, rp.tableCl, true
		rp.table = append(rp.table, make([]uint64, tableCl*u.cs/8-int64(len(rp.table)))...)
	}
	for k := first; k < need; k++ {
		if rp.table[k] == 0 {
			rp.table[k] = uint64(u.alloc())
			rp.newBlock[k] = true
		}
	}
	if tableCl > 0 {
		rp.tableOff, rp.tableCl = u.next, tableCl
		u.next += tableCl * u.cs
	}
	return rp, nil
}

// increase counts every new cluster once, writes the new table (and the
// header fields that name it) when it moved.
func (u *Updater) increase(rp *refPlan) error {
	var adds []int64
	for c := u.start / u.cs; c < u.next/u.cs; c++ {
		adds = append(adds, c)
	}
	if err := u.applyRefcounts(rp, adds, +1); err != nil {
		return err
	}
	if len(rp.newBlock) == 0 {
		return u.sync() // the counts before the tables that name what they count
	}
	if err := u.writeEntries(rp.table, rp.tableOff, true); err != nil {
		return err
	}
	if err := u.sync(); err != nil {
		return err
	}
	if !rp.moved {
		return u.sync()
	}
	var hdr [12]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(rp.tableOff))
	binary.BigEndian.PutUint32(hdr[8:], uint32(rp.tableCl))
	if _, err := u.t.WriteAt(hdr[:], 48); err != nil {
		return &IOError{Op: "write header", Name: u.name, Off: 48, Err: err}
	}
	return u.sync() // the header names the table before any table names what it counts
}

// decrease releases what the copy replaced, the old table included,
// then syncs.
func (u *Updater) decrease(rp *refPlan) error {
	drops := u.freed
	if rp.moved {
		for c := rp.oldOff / u.cs; c < rp.oldOff/u.cs+rp.oldCl; c++ {
			drops = append(drops, c)
		}
	}
	if err := u.applyRefcounts(rp, drops, -1); err != nil {
		return err
	}
	return u.sync()
}

// applyRefcounts adds delta to the refcount of each host cluster listed
// (a cluster may be listed more than once), block by block.
func (u *Updater) applyRefcounts(rp *refPlan, clusters []int64, delta int) error {
	sort.Slice(clusters, func(a, b int) bool { return clusters[a] < clusters[b] })
	perBlock := u.cs / 2
	buf := make([]byte, u.cs)
	for i := 0; i < len(clusters); {
		k := clusters[i] / perBlock
		if k >= int64(len(rp.table)) || rp.table[k] == 0 {
			return malformed(u.name, "host cluster %d has no refcount block", clusters[i])
		}
		host := int64(rp.table[k] &^ 0x1ff)
		if err := u.readBlock(rp, k, host, buf); err != nil {
			return err
		}
		for ; i < len(clusters) && clusters[i]/perBlock == k; i++ {
			at := (clusters[i] % perBlock) * 2
			n := int(binary.BigEndian.Uint16(buf[at:])) + delta
			if n < 0 || n > maxRefcount {
				return malformed(u.name, "refcount of host cluster %d would become %d", clusters[i], n)
			}
			binary.BigEndian.PutUint16(buf[at:], uint16(n))
		}
		if err := u.writeHost(buf, host); err != nil {
			return err
		}
		rp.newBlock[k] = false // written: read it back from now on
	}
	return nil
}

// readBlock reads refcount block k at host into buf; a new one is zeros.
func (u *Updater) readBlock(rp *refPlan, k, host int64, buf []byte) error {
	if rp.newBlock[k] {
		clear(buf)
		return nil
	}
	return readFull(u.t, buf, host)
}

// writeEntries writes a table at host, padded to whole clusters or not.
func (u *Updater) writeEntries(t []uint64, host int64, pad bool) error {
	n := int64(len(t)) * 8
	if pad {
		n = ceilDiv(n, u.cs) * u.cs
	}
	b := make([]byte, n)
	for k, e := range t {
		binary.BigEndian.PutUint64(b[k*8:], e)
	}
	return u.writeHost(b, host)
}

func (u *Updater) sync() error {
	if err := u.t.Sync(); err != nil {
		return &IOError{Op: "fsync", Name: u.name, Err: err}
	}
	return nil
}
