package qcow2

// One guest cluster at a time: what an Updater does with a write
// depends on what the cluster is now (see Updater).

// writeCluster writes p at inner bytes into guest cluster ci.
func (u *Updater) writeCluster(ci, inner int64, p []byte) error {
	lk := &u.locks[ci%updateLocks]
	lk.Lock()
	defer lk.Unlock()
	return u.writeClusterLocked(ci, inner, p)
}

func (u *Updater) writeClusterLocked(ci, inner int64, p []byte) error {
	e, err := u.entry(ci)
	if err != nil {
		return err
	}
	clen := u.clusterLen(ci)
	whole := inner == 0 && int64(len(p)) == clen
	if inPlace(e) {
		host := int64(e & entryOffsetMask)
		if e&entryZero == 0 {
			return u.writeHost(p, host+inner)
		}
		// A zero cluster with a host cluster of its own: once its flag
		// is cleared, what p does not cover must read as zeros.
		buf := getBuf(int(u.cs))
		defer putBuf(buf)
		clear(buf)
		copy(buf[inner:], p)
		if err := u.writeHost(buf, host); err != nil {
			return err
		}
		u.setEntry(ci, e&^entryZero)
		return nil
	}
	buf := getBuf(int(u.cs))
	defer putBuf(buf)
	clear(buf)
	if !whole && !u.readsZero(e) {
		// The rest of the cluster keeps its old guest bytes: the image
		// as opened has them (its tables on disk are not changed before
		// Close, nor are the host clusters of such a cluster).
		if err := u.im.readAt(buf[:clen], ci*u.cs); err != nil {
			return err
		}
	}
	copy(buf[inner:], p)
	host := u.alloc()
	if err := u.writeHost(buf, host); err != nil {
		return err
	}
	u.replace(ci, uint64(host)|entryCopied, e)
	return nil
}

// writeWhole writes the whole clusters at the start of p (guest offset
// pos, cluster ci) that can go in one host write: clusters overwritten in
// place whose host clusters follow one another, or clusters that move,
// given consecutive new host clusters. It returns where it stopped. No
// other write touches a cluster written whole (the engine never writes
// a byte twice at once), so it needs no cluster lock.
func (u *Updater) writeWhole(ci int64, p []byte, pos int64) (int64, error) {
	e0, err := u.entry(ci)
	if err != nil {
		return pos, err
	}
	if inPlace(e0) && e0&entryZero != 0 {
		return pos + u.clusterLen(ci), u.writeCluster(ci, 0, p[:u.clusterLen(ci)])
	}
	host0 := int64(e0 & entryOffsetMask)
	olds := []uint64{e0}
	n, bytes := int64(1), u.clusterLen(ci)
	for ; (ci+n)*u.cs < u.size && bytes+u.clusterLen(ci+n) <= int64(len(p)); n++ {
		e, err := u.entry(ci + n)
		if err != nil {
			return pos, err
		}
		if inPlace(e0) {
			if !inPlace(e) || e&entryZero != 0 || int64(e&entryOffsetMask) != host0+n*u.cs {
				break // not the next host cluster
			}
		} else if inPlace(e) {
			break // this one stays where it is
		}
		olds = append(olds, e)
		bytes += u.clusterLen(ci + n)
	}
	if inPlace(e0) {
		return pos + bytes, u.writeHost(p[:bytes], host0)
	}
	host := u.allocN(n)
	if err := u.writeHost(p[:bytes], host); err != nil {
		return pos, err
	}
	for i, old := range olds {
		u.replace(ci+int64(i), uint64(host+int64(i)*u.cs)|entryCopied, old)
	}
	return pos + bytes, nil
}

// zeroCluster makes guest cluster ci read as zeros.
func (u *Updater) zeroCluster(ci int64) error {
	lk := &u.locks[ci%updateLocks]
	lk.Lock()
	defer lk.Unlock()
	e, err := u.entry(ci)
	if err != nil {
		return err
	}
	switch {
	case u.readsZero(e):
		// Already: an image made for the copy stays without tables
		// where SRC has holes.
	case u.zeroF && inPlace(e):
		if e&entryZero == 0 {
			u.setEntry(ci, e|entryZero)
		}
	case u.zeroF:
		u.replace(ci, entryZero, e)
	case !u.backed:
		u.replace(ci, 0, e)
	default:
		// Version 2 over a backing file: no zero clusters, and an
		// unallocated one would read the backing file.
		return u.writeClusterLocked(ci, 0, zeroCluster[:u.clusterLen(ci)])
	}
	return nil
}

// inPlace says an L2 entry's cluster is stored as it is and is the
// image's alone (COPIED: refcount 1), so it may be overwritten.
func inPlace(e uint64) bool {
	return e&entryCompressed == 0 && e&entryOffsetMask != 0 && e&entryCopied != 0
}

// readsZero says an entry's cluster reads as zeros by itself: a zero
// cluster without a host cluster, or unallocated with no backing file.
func (u *Updater) readsZero(e uint64) bool {
	if e&entryCompressed != 0 || e&entryOffsetMask != 0 {
		return false
	}
	return u.zeroF && e&entryZero != 0 || !u.backed
}

// entry is guest cluster ci's L2 entry as it is now. The image's own
// table is copied on first use (the cache's tables are shared, never
// changed), so that setEntry finds it; where the image has none, none is
// made until an entry is set: zeroing a disk's holes costs no memory.
func (u *Updater) entry(ci int64) (uint64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	i := ci / u.im.l2n
	if t := u.l2[i]; t != nil {
		return t[ci%u.im.l2n], nil
	}
	old, err := u.im.l2Table(i)
	if err != nil || old == nil {
		return 0, err
	}
	t := make([]uint64, u.im.l2n)
	copy(t, old)
	u.l2[i] = t
	return t[ci%u.im.l2n], nil
}

func (u *Updater) setEntry(ci int64, e uint64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.setEntryLocked(ci, e)
}

func (u *Updater) setEntryLocked(ci int64, e uint64) {
	i := ci / u.im.l2n
	t := u.l2[i]
	if t == nil { // the image has no table here (entry saw none)
		t = make([]uint64, u.im.l2n)
		u.l2[i] = t
	}
	t[ci%u.im.l2n] = e
	u.dirty[i] = true
	u.pending = min(u.pending, ci*u.cs)
}

// replace sets cluster ci's entry to e, and releases what old held.
func (u *Updater) replace(ci int64, e, old uint64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.setEntryLocked(ci, e)
	switch {
	case old&entryCompressed != 0:
		coff, cn := u.im.compressedSpan(old)
		first := coff &^ 511
		for c := first / u.cs; c <= (first+ceilDiv(coff%512+cn, 512)*512-1)/u.cs; c++ {
			u.freed = append(u.freed, c)
		}
	case old&entryOffsetMask != 0:
		u.freed = append(u.freed, int64(old&entryOffsetMask)/u.cs)
	}
}

// alloc hands out a new host cluster after the last one used.
func (u *Updater) alloc() int64 { return u.allocN(1) }

// allocN hands out n consecutive new host clusters.
func (u *Updater) allocN(n int64) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	host := u.next
	u.next += n * u.cs
	return host
}

func (u *Updater) writeHost(p []byte, host int64) error {
	if _, err := u.t.WriteAt(p, host); err != nil {
		return &IOError{Op: "write", Name: u.name, Off: host, Err: err}
	}
	return nil
}
